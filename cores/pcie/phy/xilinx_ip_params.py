#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Where each CONFIG name (and value) of the root-port IPs comes from.

The root-port PHYs (``s7rootport.py``, ``usrootport.py``) create their integrated block with
``create_ip`` + ``set_property -dict [list CONFIG.<name> {<value>} ...]``. There is no Vivado on the
development machines, so every name and value was checked against a published use of the *same*
IP (or, where noted, of the Xilinx wrapper IP that embeds it and forwards the same-named parameter).
Facts only: the sources below were read, nothing was copied from them.

Vivado property names are case-insensitive (``DEVICE_PORT_TYPE`` and ``device_port_type`` are one
property: the sources spell some names both ways); ``confirmed_name()`` compares them that way.
"""

# Sources ------------------------------------------------------------------------------------------

SOURCES = {
    "XCI-7X"       : "ufrisk/pcileech-fpga GBOX/ip/pcie_7x_0.xci (a pcie_7x 3.3 instance: every "
                     "parameter of the IP with its value)",
    "LITEPCIE"     : "LitePCIe 2024.12 (installed package) litepcie/phy/s7pciephy.py, uspciephy.py, "
                     "usppciephy.py: the endpoint configurations of the same IPs",
    "LITEPCIE-RP"  : "enjoy-digital/litepcie a71443e (2026-06) litepcie/phy/s7pciephy.py, uspciephy.py, "
                     "usppciephy.py: RootPort mode of the same IPs",
    "CONNECTAL"    : "cambridgehackers/connectal scripts/connectal-synth-pcie-rp.tcl (pcie_7x 'pcie_7x_rp', "
                     "Device_Port_Type Root_Port_of_PCI_Express_Root_Complex), "
                     "scripts/generate-pcie-gen1x8.tcl (pcie_7x, Use_Class_Code_Lookup_Assistant false)",
    "CORUNDUM-US"  : "corundum/corundum fpga/lib/pcie/example/ExaNIC_X10/fpga_axi/ip/pcie3_ultrascale_0.tcl, "
                     "fpga/mqnic/DNPCIe_40G_KU_LL_2QSFP/fpga/ip/pcie3_ultrascale_0.tcl, "
                     "fpga/mqnic/VCU108/fpga_10g/ip/pcie3_ultrascale_0.tcl",
    "CORUNDUM-USP" : "corundum/corundum example/AU250/fpga_axi/ip/pcie4_uscale_plus_0.tcl, "
                     "fpga/lib/pcie/example/ExaNIC_X25/fpga/ip/pcie4_uscale_plus_0.tcl",
    "CAPI2"        : "open-power/capi2-bsp AD9V3/tcl/create_ip.tcl, N250SP/tcl/create_ip.tcl "
                     "(pcie4_uscale_plus: ins_loss_profile, pcie_blk_locn, en_gt_selection, select_quad)",
    "LITEX-BOARDS" : "litex-hub/litex-boards litex_boards/targets/alibaba_vu13p.py, alinx_axau15.py "
                     "(USPPCIEPHY, i.e. pcie4_uscale_plus: mode_selection, en_gt_selection, select_quad "
                     "GTx_Quad_nnn, pcie_blk_locn X0Yn, REF_CLK_FREQ 100_MHz)",
    "OPSERO"       : "fpgadeveloper/fpga-drive-aximm-pcie Vivado/src/bd/bd_mb.tcl (KCU105: axi_pcie3, the "
                     "AXI bridge built on pcie3_ultrascale) and bd_zynqmp.tcl (ZCU106: xdma, built on "
                     "pcie4_uscale_plus): the FPGA Drive FMC's own root-port settings",
    "PG054"        : "Xilinx PG054 (7 Series Integrated Block for PCI Express): Gen2 x4 at 64 bits / "
                     "250 MHz or 128 bits / 125 MHz; reference clock 100/125/250 MHz",
    "PG156"        : "Xilinx PG156 (UltraScale Gen3 Integrated Block): Gen3 x4 at 128 bits / 250 MHz or "
                     "256 bits / 125 MHz; core clock 250 MHz up to x4; reference clock default 100 MHz",
    "PG213"        : "Xilinx PG213 (UltraScale+ Integrated Block): as PG156 for Gen3 x4",
    "PCI-CLASS"    : "PCI Code and ID Assignment: class 06h (bridge) / 04h (PCI-to-PCI) / 00h",
}

# Confirmed CONFIG names per IP: {name: (source of the name, source of our value)} -----------------

IP_PARAMS = {
    "pcie_7x": {
        "Component_Name"                  : ("XCI-7X",      "LITEPCIE"),
        "mode_selection"                  : ("XCI-7X",      "LITEPCIE"),
        "Device_Port_Type"                : ("XCI-7X",      "CONNECTAL LITEPCIE-RP"),
        "Maximum_Link_Width"              : ("XCI-7X",      "LITEPCIE"),
        "Link_Speed"                      : ("XCI-7X",      "LITEPCIE"),
        "Trgt_Link_Speed"                 : ("XCI-7X",      "LITEPCIE"),
        "Interface_Width"                 : ("XCI-7X",      "PG054"),
        "User_Clk_Freq"                   : ("XCI-7X",      "PG054"),
        "Ref_Clk_Freq"                    : ("LITEPCIE",    "PG054"),
        "PCIe_Blk_Locn"                   : ("XCI-7X",      "LITEPCIE"),
        "Device_ID"                       : ("XCI-7X",      "LITEPCIE"),
        "Use_Class_Code_Lookup_Assistant" : ("XCI-7X",      "CONNECTAL"),
        "Class_Code_Base"                 : ("XCI-7X",      "PCI-CLASS"),
        "Class_Code_Sub"                  : ("XCI-7X",      "PCI-CLASS"),
        "Class_Code_Interface"            : ("XCI-7X",      "PCI-CLASS"),
        "Bar0_Enabled"                    : ("XCI-7X",      "XCI-7X"),
        "Max_Payload_Size"                : ("XCI-7X",      "LITEPCIE"),
        "Legacy_Interrupt"                : ("XCI-7X",      "LITEPCIE"),
        "IntX_Generation"                 : ("XCI-7X",      "LITEPCIE"),
    },
    "pcie3_ultrascale": {
        "Component_Name"                      : ("LITEPCIE",    "LITEPCIE"),
        "mode_selection"                      : ("CORUNDUM-US", "CORUNDUM-US"),
        "device_port_type"                    : ("LITEPCIE-RP", "LITEPCIE-RP OPSERO"),
        "PL_LINK_CAP_MAX_LINK_WIDTH"          : ("CORUNDUM-US", "LITEPCIE"),
        "PL_LINK_CAP_MAX_LINK_SPEED"          : ("CORUNDUM-US", "CORUNDUM-US"),
        "axisten_if_width"                    : ("CORUNDUM-US", "PG156"),
        "axisten_freq"                        : ("CORUNDUM-US", "PG156 OPSERO"),
        "AXISTEN_IF_RC_STRADDLE"              : ("CORUNDUM-US", "LITEPCIE"),
        "axisten_if_enable_client_tag"        : ("CORUNDUM-US", "LITEPCIE"),
        "extended_tag_field"                  : ("CORUNDUM-US", "CORUNDUM-US"),
        "PF0_DEVICE_ID"                       : ("CORUNDUM-US", "OPSERO"),
        "PF0_Use_Class_Code_Lookup_Assistant" : ("CORUNDUM-US", "OPSERO"),
        "PF0_CLASS_CODE"                      : ("CORUNDUM-US", "OPSERO PCI-CLASS"),
        "pf0_dev_cap_max_payload"             : ("CORUNDUM-US", "CORUNDUM-US"),
        "PF0_INTERRUPT_PIN"                   : ("CORUNDUM-US", "LITEPCIE"),
        "aspm_support"                        : ("LITEPCIE",    "LITEPCIE"),
        "coreclk_freq"                        : ("LITEPCIE",    "PG156 OPSERO"),
        "plltype"                             : ("LITEPCIE",    "LITEPCIE OPSERO"),
        # Names seen on axi_pcie3 (OPSERO, KCU105), the bridge IP that embeds pcie3_ultrascale, not
        # on pcie3_ultrascale itself: see doc/boards.md "IP parameters confirmed only on a wrapper".
        "pcie_blk_locn"                       : ("OPSERO",      "OPSERO"),
        "pf0_bar0_enabled"                    : ("OPSERO",      "OPSERO"),
        "ins_loss_profile"                    : ("OPSERO",      "OPSERO"),
        "INS_LOSS_NYQ"                        : ("OPSERO",      "OPSERO"),
        "type1_membase_memlimit_enable"       : ("OPSERO",      "OPSERO"),
    },
    "pcie4_uscale_plus": {
        "Component_Name"                      : ("LITEPCIE",     "LITEPCIE"),
        "mode_selection"                      : ("CORUNDUM-USP", "LITEX-BOARDS"),
        "device_port_type"                    : ("LITEPCIE-RP",  "LITEPCIE-RP OPSERO"),
        "PL_LINK_CAP_MAX_LINK_WIDTH"          : ("CORUNDUM-USP", "LITEPCIE"),
        "PL_LINK_CAP_MAX_LINK_SPEED"          : ("CORUNDUM-USP", "CORUNDUM-USP"),
        "axisten_if_width"                    : ("CORUNDUM-USP", "PG213"),
        "axisten_freq"                        : ("CORUNDUM-USP", "PG213 OPSERO"),
        "AXISTEN_IF_RC_STRADDLE"              : ("CORUNDUM-USP", "LITEPCIE"),
        "axisten_if_enable_client_tag"        : ("CORUNDUM-USP", "LITEPCIE"),
        "extended_tag_field"                  : ("CORUNDUM-USP", "CORUNDUM-USP"),
        "PF0_DEVICE_ID"                       : ("CORUNDUM-USP", "OPSERO"),
        "PF0_Use_Class_Code_Lookup_Assistant" : ("CORUNDUM-USP", "OPSERO"),
        "PF0_CLASS_CODE"                      : ("CORUNDUM-USP", "LITEPCIE-RP OPSERO PCI-CLASS"),
        "pf0_dev_cap_max_payload"             : ("CAPI2",        "CAPI2"),
        "PF0_INTERRUPT_PIN"                   : ("LITEPCIE",     "LITEPCIE"),
        "aspm_support"                        : ("LITEPCIE",     "LITEPCIE"),
        "coreclk_freq"                        : ("LITEPCIE",     "PG213 OPSERO"),
        "plltype"                             : ("LITEPCIE",     "OPSERO"),
        "REF_CLK_FREQ"                        : ("LITEX-BOARDS", "LITEX-BOARDS"),
        "pcie_blk_locn"                       : ("LITEX-BOARDS CAPI2", "OPSERO"),
        "en_gt_selection"                     : ("CORUNDUM-USP CAPI2 LITEX-BOARDS", "OPSERO"),
        "select_quad"                         : ("CAPI2 LITEX-BOARDS", "OPSERO"),
        "ins_loss_profile"                    : ("CAPI2",        "OPSERO"),
        # Names seen on xdma (OPSERO, ZCU106), the IP that embeds pcie4_uscale_plus, not on
        # pcie4_uscale_plus itself: see doc/boards.md "IP parameters confirmed only on a wrapper".
        "pf0_bar0_enabled"                    : ("OPSERO",       "OPSERO"),
        "INS_LOSS_NYQ"                        : ("OPSERO",       "OPSERO"),
        "type1_membase_memlimit_enable"       : ("OPSERO",       "OPSERO"),
    },
}

# Names whose only published use is on a wrapper IP (listed in the TCL comment and doc/boards.md).
WRAPPER_ONLY = {
    "pcie_7x"           : [],
    "pcie3_ultrascale"  : ["pcie_blk_locn", "pf0_bar0_enabled", "ins_loss_profile", "INS_LOSS_NYQ",
                           "type1_membase_memlimit_enable"],
    "pcie4_uscale_plus" : ["pf0_bar0_enabled", "INS_LOSS_NYQ", "type1_membase_memlimit_enable"],
}

def confirmed_name(ip, name):
    """The confirmed spelling of CONFIG ``name`` for ``ip`` (case-insensitive, as Vivado), or None."""
    for n in IP_PARAMS[ip]:
        if n.lower() == name.lower():
            return n
    return None
