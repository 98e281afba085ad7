//
// This file is part of LiteRecorder.
//
// SPDX-License-Identifier: BSD-2-Clause

`timescale 1ns / 1ps
//
// Lint-only black box of the pcie_7x integrated block generated as `pcie_s7_rp` (root port).
// Port list: Vivado synthesis stub of pcie_7x (pcie2_top) plus the PIPE clock ports of the
// "shared logic in example design" configuration that LitePCIe's S7PCIEPHY also drives (PG054).
// `RP_DATA_WIDTH` (64/128) and `RP_NLANES` (1/2/4/8) select the generated configuration.

`ifndef RP_DATA_WIDTH
`define RP_DATA_WIDTH 128
`endif
`ifndef RP_NLANES
`define RP_NLANES 4
`endif

/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNDRIVEN */

module pcie_s7_rp (
  output [`RP_NLANES-1:0]     pci_exp_txp,
  output [`RP_NLANES-1:0]     pci_exp_txn,
  input  [`RP_NLANES-1:0]     pci_exp_rxp,
  input  [`RP_NLANES-1:0]     pci_exp_rxn,
  // PIPE clocking.
  input                       pipe_pclk_in,
  input                       pipe_rxusrclk_in,
  input  [`RP_NLANES-1:0]     pipe_rxoutclk_in,
  input                       pipe_dclk_in,
  input                       pipe_userclk1_in,
  input                       pipe_userclk2_in,
  input                       pipe_oobclk_in,
  input                       pipe_mmcm_lock_in,
  output                      pipe_txoutclk_out,
  output [`RP_NLANES-1:0]     pipe_rxoutclk_out,
  output [`RP_NLANES-1:0]     pipe_pclk_sel_out,
  output                      pipe_gen3_out,
  input                       pipe_mmcm_rst_n,
  // Common.
  output                      user_clk_out,
  output                      user_reset_out,
  output                      user_lnk_up,
  output                      user_app_rdy,
  // TX.
  output [5:0]                tx_buf_av,
  output                      tx_cfg_req,
  output                      tx_err_drop,
  output                      s_axis_tx_tready,
  input  [`RP_DATA_WIDTH-1:0] s_axis_tx_tdata,
  input  [`RP_DATA_WIDTH/8-1:0] s_axis_tx_tkeep,
  input                       s_axis_tx_tlast,
  input                       s_axis_tx_tvalid,
  input  [3:0]                s_axis_tx_tuser,
  input                       tx_cfg_gnt,
  // RX.
  output [`RP_DATA_WIDTH-1:0] m_axis_rx_tdata,
  output [`RP_DATA_WIDTH/8-1:0] m_axis_rx_tkeep,
  output                      m_axis_rx_tlast,
  output                      m_axis_rx_tvalid,
  input                       m_axis_rx_tready,
  output [21:0]               m_axis_rx_tuser,
  input                       rx_np_ok,
  input                       rx_np_req,
  // Configuration.
  output [31:0]               cfg_mgmt_do,
  output                      cfg_mgmt_rd_wr_done,
  output [15:0]               cfg_status,
  output [15:0]               cfg_command,
  output [15:0]               cfg_dstatus,
  output [15:0]               cfg_dcommand,
  output [15:0]               cfg_lstatus,
  output [15:0]               cfg_lcommand,
  output [15:0]               cfg_dcommand2,
  output [2:0]                cfg_pcie_link_state,
  output                      cfg_pmcsr_pme_en,
  output [1:0]                cfg_pmcsr_powerstate,
  output                      cfg_pmcsr_pme_status,
  output                      cfg_received_func_lvl_rst,
  input  [31:0]               cfg_mgmt_di,
  input  [3:0]                cfg_mgmt_byte_en,
  input  [9:0]                cfg_mgmt_dwaddr,
  input                       cfg_mgmt_wr_en,
  input                       cfg_mgmt_rd_en,
  input                       cfg_mgmt_wr_readonly,
  input                       cfg_trn_pending,
  input                       cfg_pm_halt_aspm_l0s,
  input                       cfg_pm_halt_aspm_l1,
  input                       cfg_pm_force_state_en,
  input  [1:0]                cfg_pm_force_state,
  input  [63:0]               cfg_dsn,
  input                       cfg_interrupt,
  output                      cfg_interrupt_rdy,
  input                       cfg_interrupt_assert,
  input  [7:0]                cfg_interrupt_di,
  output [7:0]                cfg_interrupt_do,
  output [2:0]                cfg_interrupt_mmenable,
  output                      cfg_interrupt_msienable,
  output                      cfg_interrupt_msixenable,
  output                      cfg_interrupt_msixfm,
  input                       cfg_interrupt_stat,
  input  [4:0]                cfg_pciecap_interrupt_msgnum,
  output                      cfg_to_turnoff,
  input                       cfg_turnoff_ok,
  output [7:0]                cfg_bus_number,
  output [4:0]                cfg_device_number,
  output [2:0]                cfg_function_number,
  input                       cfg_pm_wake,
  input                       cfg_pm_send_pme_to,
  input  [7:0]                cfg_ds_bus_number,
  input  [4:0]                cfg_ds_device_number,
  input  [2:0]                cfg_ds_function_number,
  input                       cfg_mgmt_wr_rw1c_as_rw,
  output                      cfg_bridge_serr_en,
  output                      cfg_slot_control_electromech_il_ctl_pulse,
  output                      cfg_root_control_syserr_corr_err_en,
  output                      cfg_root_control_syserr_non_fatal_err_en,
  output                      cfg_root_control_syserr_fatal_err_en,
  output                      cfg_root_control_pme_int_en,
  output                      cfg_aer_rooterr_corr_err_reporting_en,
  output                      cfg_aer_rooterr_non_fatal_err_reporting_en,
  output                      cfg_aer_rooterr_fatal_err_reporting_en,
  output                      cfg_aer_rooterr_corr_err_received,
  output                      cfg_aer_rooterr_non_fatal_err_received,
  output                      cfg_aer_rooterr_fatal_err_received,
  // Physical layer.
  input  [1:0]                pl_directed_link_change,
  input  [1:0]                pl_directed_link_width,
  input                       pl_directed_link_speed,
  input                       pl_directed_link_auton,
  input                       pl_upstream_prefer_deemph,
  output                      pl_sel_lnk_rate,
  output [1:0]                pl_sel_lnk_width,
  output [5:0]                pl_ltssm_state,
  output [1:0]                pl_lane_reversal_mode,
  output                      pl_phy_lnk_up,
  output [2:0]                pl_tx_pm_state,
  output [1:0]                pl_rx_pm_state,
  output                      pl_link_upcfg_cap,
  output                      pl_link_gen2_cap,
  output                      pl_link_partner_gen2_supported,
  output [2:0]                pl_initial_link_width,
  output                      pl_directed_change_done,
  output                      pl_received_hot_rst,
  input                       pl_transmit_hot_rst,
  input                       pl_downstream_deemph_source,
  output [6:0]                cfg_vc_tcvc_map,
  input                       sys_clk,
  input                       sys_rst_n
);
endmodule
