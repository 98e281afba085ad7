//
// This file is part of LiteRecorder.
//
// SPDX-License-Identifier: BSD-2-Clause

`timescale 1ns / 1ps
//
// Lint-only stand-ins for the Xilinx primitives the root-port PHY designs instantiate (ports and
// parameters as used by LiteX/Migen). Not functional models: for `verilator --lint-only` only.

/* verilator lint_off UNUSEDPARAM */
/* verilator lint_off UNUSEDSIGNAL */

module BUFG (input I, output O);
  assign O = I;
endmodule

module BUFGCTRL (input CE0, input CE1, input I0, input I1, input IGNORE0, input IGNORE1,
  input S0, input S1, output O);
  assign O = S1 ? I1 : I0;
endmodule

module FDCE #(parameter INIT = 1'b0) (input C, input CE, input CLR, input D, output reg Q);
  always @(posedge C or posedge CLR) if (CLR) Q <= 1'b0; else if (CE) Q <= D;
endmodule

module FDPE #(parameter INIT = 1'b1) (input C, input CE, input PRE, input D, output reg Q);
  always @(posedge C or posedge PRE) if (PRE) Q <= 1'b1; else if (CE) Q <= D;
endmodule

module IBUFDS (input I, input IB, output O);
  assign O = I;
endmodule

module IBUFDS_GTE2 (input I, input IB, input CEB, output O, output ODIV2);
  assign O = I;
  assign ODIV2 = I;
endmodule

module IBUFDS_GTE3 #(parameter REFCLK_HROW_CK_SEL = 0) (input I, input IB, input CEB, output O,
  output ODIV2);
  assign O = I;
  assign ODIV2 = I;
endmodule

module IBUFDS_GTE4 #(parameter REFCLK_HROW_CK_SEL = 0) (input I, input IB, input CEB, output O,
  output ODIV2);
  assign O = I;
  assign ODIV2 = I;
endmodule

module MMCME2_ADV #(
  parameter BANDWIDTH = "OPTIMIZED", parameter real CLKIN1_PERIOD = 0.0,
  parameter real CLKFBOUT_MULT_F = 5.0, parameter DIVCLK_DIVIDE = 1, parameter real REF_JITTER1 = 0.01,
  parameter real CLKOUT0_DIVIDE_F = 1.0, parameter real CLKOUT0_PHASE = 0.0,
  parameter CLKOUT1_DIVIDE = 1, parameter real CLKOUT1_PHASE = 0.0,
  parameter CLKOUT2_DIVIDE = 1, parameter real CLKOUT2_PHASE = 0.0,
  parameter CLKOUT3_DIVIDE = 1, parameter real CLKOUT3_PHASE = 0.0,
  parameter CLKOUT4_DIVIDE = 1, parameter real CLKOUT4_PHASE = 0.0,
  parameter CLKOUT5_DIVIDE = 1, parameter real CLKOUT5_PHASE = 0.0,
  parameter CLKOUT6_DIVIDE = 1, parameter real CLKOUT6_PHASE = 0.0
) (
  input CLKIN1, input CLKFBIN, input RST, input PWRDWN,
  output CLKFBOUT, output CLKOUT0, output CLKOUT1, output CLKOUT2, output CLKOUT3,
  output CLKOUT4, output CLKOUT5, output CLKOUT6, output LOCKED
);
  assign {CLKFBOUT, CLKOUT0, CLKOUT1, CLKOUT2, CLKOUT3, CLKOUT4, CLKOUT5, CLKOUT6} = {8{CLKIN1}};
  assign LOCKED = ~RST;
endmodule
