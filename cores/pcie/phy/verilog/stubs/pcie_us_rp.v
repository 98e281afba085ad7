//
// This file is part of LiteRecorder.
//
// SPDX-License-Identifier: BSD-2-Clause

`timescale 1ns / 1ps
//
// Lint-only black box of the pcie3_ultrascale integrated block generated as `pcie_us_rp` (root
// port). Port list and widths: Vivado synthesis stub of pcie3_ultrascale (PG156), shared logic in
// the core (sys_clk/sys_clk_gt, no int_* ports), MSI-X/FLR/per-function ports omitted (unused).
// `RP_DATA_WIDTH` (128/256) and `RP_NLANES` (1/2/4/8) select the generated configuration.

`ifndef RP_DATA_WIDTH
`define RP_DATA_WIDTH 256
`endif
`ifndef RP_NLANES
`define RP_NLANES 4
`endif

/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNDRIVEN */

module pcie_us_rp (
  output [`RP_NLANES-1:0]      pci_exp_txn,
  output [`RP_NLANES-1:0]      pci_exp_txp,
  input  [`RP_NLANES-1:0]      pci_exp_rxn,
  input  [`RP_NLANES-1:0]      pci_exp_rxp,
  output                       user_clk,
  output                       user_reset,
  output                       user_lnk_up,
  output                       phy_rdy_out,
  input                        s_axis_rq_tlast,
  input  [`RP_DATA_WIDTH-1:0]  s_axis_rq_tdata,
  input  [59:0]                s_axis_rq_tuser,
  input  [`RP_DATA_WIDTH/32-1:0] s_axis_rq_tkeep,
  output [3:0]                 s_axis_rq_tready,
  input                        s_axis_rq_tvalid,
  output [`RP_DATA_WIDTH-1:0]  m_axis_rc_tdata,
  output [74:0]                m_axis_rc_tuser,
  output                       m_axis_rc_tlast,
  output [`RP_DATA_WIDTH/32-1:0] m_axis_rc_tkeep,
  output                       m_axis_rc_tvalid,
  input                        m_axis_rc_tready,
  output [`RP_DATA_WIDTH-1:0]  m_axis_cq_tdata,
  output [84:0]                m_axis_cq_tuser,
  output                       m_axis_cq_tlast,
  output [`RP_DATA_WIDTH/32-1:0] m_axis_cq_tkeep,
  output                       m_axis_cq_tvalid,
  input                        m_axis_cq_tready,
  input  [`RP_DATA_WIDTH-1:0]  s_axis_cc_tdata,
  input  [32:0]                s_axis_cc_tuser,
  input                        s_axis_cc_tlast,
  input  [`RP_DATA_WIDTH/32-1:0] s_axis_cc_tkeep,
  input                        s_axis_cc_tvalid,
  output [3:0]                 s_axis_cc_tready,
  output [3:0]                 pcie_rq_seq_num,
  output                       pcie_rq_seq_num_vld,
  output [5:0]                 pcie_rq_tag,
  output                       pcie_rq_tag_vld,
  output [1:0]                 pcie_tfc_nph_av,
  output [1:0]                 pcie_tfc_npd_av,
  input                        pcie_cq_np_req,
  output [5:0]                 pcie_cq_np_req_count,
  output                       cfg_phy_link_down,
  output [1:0]                 cfg_phy_link_status,
  output [3:0]                 cfg_negotiated_width,
  output [2:0]                 cfg_current_speed,
  output [2:0]                 cfg_max_payload,
  output [2:0]                 cfg_max_read_req,
  output [7:0]                 cfg_function_status,
  output [5:0]                 cfg_function_power_state,
  output [11:0]                cfg_vf_status,
  output [17:0]                cfg_vf_power_state,
  output [1:0]                 cfg_link_power_state,
  input  [18:0]                cfg_mgmt_addr,
  input                        cfg_mgmt_write,
  input  [31:0]                cfg_mgmt_write_data,
  input  [3:0]                 cfg_mgmt_byte_enable,
  input                        cfg_mgmt_read,
  output [31:0]                cfg_mgmt_read_data,
  output                       cfg_mgmt_read_write_done,
  input                        cfg_mgmt_type1_cfg_reg_access,
  output                       cfg_err_cor_out,
  output                       cfg_err_nonfatal_out,
  output                       cfg_err_fatal_out,
  output                       cfg_ltr_enable,
  output [5:0]                 cfg_ltssm_state,
  output [1:0]                 cfg_rcb_status,
  output [1:0]                 cfg_dpa_substate_change,
  output [1:0]                 cfg_obff_enable,
  output                       cfg_pl_status_change,
  output [1:0]                 cfg_tph_requester_enable,
  output [5:0]                 cfg_tph_st_mode,
  output [5:0]                 cfg_vf_tph_requester_enable,
  output [17:0]                cfg_vf_tph_st_mode,
  output                       cfg_msg_received,
  output [7:0]                 cfg_msg_received_data,
  output [4:0]                 cfg_msg_received_type,
  input                        cfg_msg_transmit,
  input  [2:0]                 cfg_msg_transmit_type,
  input  [31:0]                cfg_msg_transmit_data,
  output                       cfg_msg_transmit_done,
  output [7:0]                 cfg_fc_ph,
  output [11:0]                cfg_fc_pd,
  output [7:0]                 cfg_fc_nph,
  output [11:0]                cfg_fc_npd,
  output [7:0]                 cfg_fc_cplh,
  output [11:0]                cfg_fc_cpld,
  input  [2:0]                 cfg_fc_sel,
  input  [15:0]                cfg_subsys_vend_id,
  input  [63:0]                cfg_dsn,
  input                        cfg_power_state_change_ack,
  output                       cfg_power_state_change_interrupt,
  input                        cfg_err_cor_in,
  input                        cfg_err_uncor_in,
  input                        cfg_link_training_enable,
  input  [3:0]                 cfg_interrupt_int,
  input  [1:0]                 cfg_interrupt_pending,
  output                       cfg_interrupt_sent,
  output                       cfg_hot_reset_out,
  input                        cfg_config_space_enable,
  input                        cfg_req_pm_transition_l23_ready,
  input                        cfg_hot_reset_in,
  input  [7:0]                 cfg_ds_port_number,
  input  [7:0]                 cfg_ds_bus_number,
  input  [4:0]                 cfg_ds_device_number,
  input  [2:0]                 cfg_ds_function_number,
  input                        sys_clk,
  input                        sys_clk_gt,
  input                        sys_reset
);
endmodule
