#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Where each CONFIG name (and value) of the root-port IPs comes from.

The root-port PHYs (``s7rootport.py``, ``usrootport.py``) create their integrated block with
``create_ip -version <IP_VERSIONS[ip]>`` + ``set_property -dict [list CONFIG.<name> {<value>} ...]``.
There is no Vivado on the development machines, so every name was checked against the complete
parameter list of the same IP at that version, as Vivado wrote it into a published ``.xci``
(vendored as test data: ``test/data/xilinx_ip/<ip>.json``, with its origin; the build-script test
rejects any name absent from it), and every value against a published use of the IP (sources
below). Facts only: the sources below were read, nothing was copied from them.

Vivado property names are case-insensitive (``DEVICE_PORT_TYPE`` and ``device_port_type`` are one
property: the sources spell some names both ways); ``confirmed_name()`` compares them that way.
"""

# Sources ------------------------------------------------------------------------------------------

SOURCES = {
    "XCI-7X"       : "ufrisk/pcileech-fpga GBOX/ip/pcie_7x_0.xci @ f38b169 (pcie_7x 3.3, Vivado "
                     "2023.2: every parameter of the IP with its value)",
    "XCI-US"       : "corundum/corundum fpga/mqnic/ExaNIC_X10/fpga/ip/pcie3_ultrascale_0.xci @ 835abf9 "
                     "(pcie3_ultrascale 4.4, Vivado 2019.1: every parameter of the IP with its value)",
    "XCI-USP"      : "SS1234567890/corundum_13p ip/pcie4_uscale_plus_0/pcie4_uscale_plus_0.xci @ 4a5fd52 "
                     "(pcie4_uscale_plus 1.3, Vivado 2022.2: every parameter of the IP with its value)",
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
                     "GTx_Quad_nnn, pcie_blk_locn X0Yn with gen_x<n>y<n> true, REF_CLK_FREQ 100_MHz)",
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

# IP versions --------------------------------------------------------------------------------------

#: The version of each IP the PHYs create (``create_ip -version``): that of its complete parameter
#: list (XCI-7X, XCI-US, XCI-USP), the list every name below was checked against.
IP_VERSIONS = {
    "pcie_7x"           : "3.3",
    "pcie3_ultrascale"  : "4.4",
    "pcie4_uscale_plus" : "1.3",
}

#: The ``gen_x<n>y<n>`` flags of each IP's integrated blocks (XCI-US, XCI-USP: the flag of the block
#: ``pcie_blk_locn`` names is true, every other one false; litex-boards sets them with the block).
GEN_SITES = {
    "pcie_7x"           : [],
    "pcie3_ultrascale"  : [f"x0y{y}" for y in range(6)],
    "pcie4_uscale_plus" : [f"x{x}y{y}" for x in range(2) for y in range(6)],
}

# CONFIG names per IP: {name: (source of the name, source of our value)} -----------------------------

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
        "Ref_Clk_Freq"                    : ("XCI-7X",      "PG054"),
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
        "Component_Name"                      : ("XCI-US",  "LITEPCIE"),
        "mode_selection"                      : ("XCI-US",  "CORUNDUM-US"),
        "device_port_type"                    : ("XCI-US",  "LITEPCIE-RP OPSERO"),
        "PL_LINK_CAP_MAX_LINK_WIDTH"          : ("XCI-US",  "LITEPCIE"),
        "PL_LINK_CAP_MAX_LINK_SPEED"          : ("XCI-US",  "CORUNDUM-US"),
        "axisten_if_width"                    : ("XCI-US",  "PG156"),
        "axisten_freq"                        : ("XCI-US",  "PG156 OPSERO"),
        "AXISTEN_IF_RC_STRADDLE"              : ("XCI-US",  "LITEPCIE"),
        "axisten_if_enable_client_tag"        : ("XCI-US",  "LITEPCIE"),
        "extended_tag_field"                  : ("XCI-US",  "CORUNDUM-US"),
        "PF0_DEVICE_ID"                       : ("XCI-US",  "OPSERO"),
        "PF0_Use_Class_Code_Lookup_Assistant" : ("XCI-US",  "OPSERO"),
        "PF0_CLASS_CODE"                      : ("XCI-US",  "OPSERO PCI-CLASS"),
        "pf0_dev_cap_max_payload"             : ("XCI-US",  "CORUNDUM-US"),
        "PF0_INTERRUPT_PIN"                   : ("XCI-US",  "LITEPCIE"),
        "aspm_support"                        : ("XCI-US",  "LITEPCIE"),
        "coreclk_freq"                        : ("XCI-US",  "PG156 OPSERO"),
        "plltype"                             : ("XCI-US",  "LITEPCIE OPSERO"),
        "REF_CLK_FREQ"                        : ("XCI-US",  "PG156 XCI-US"),
        "pcie_blk_locn"                       : ("XCI-US",  "OPSERO XCI-US"),
        "pf0_bar0_enabled"                    : ("XCI-US",  "OPSERO"),
        "ins_loss_profile"                    : ("XCI-US",  "OPSERO"),
        "INS_LOSS_NYQ"                        : ("XCI-US",  "OPSERO"),
        **{f"gen_{s}"                         : ("XCI-US",  "XCI-US LITEX-BOARDS") for s in GEN_SITES["pcie3_ultrascale"]},
    },
    "pcie4_uscale_plus": {
        "Component_Name"                      : ("XCI-USP", "LITEPCIE"),
        "mode_selection"                      : ("XCI-USP", "LITEX-BOARDS"),
        "device_port_type"                    : ("XCI-USP", "LITEPCIE-RP OPSERO"),
        "PL_LINK_CAP_MAX_LINK_WIDTH"          : ("XCI-USP", "LITEPCIE"),
        "PL_LINK_CAP_MAX_LINK_SPEED"          : ("XCI-USP", "CORUNDUM-USP"),
        "axisten_if_width"                    : ("XCI-USP", "PG213"),
        "axisten_freq"                        : ("XCI-USP", "PG213 OPSERO"),
        "AXISTEN_IF_RC_STRADDLE"              : ("XCI-USP", "LITEPCIE"),
        "axisten_if_enable_client_tag"        : ("XCI-USP", "LITEPCIE"),
        "extended_tag_field"                  : ("XCI-USP", "CORUNDUM-USP"),
        "PF0_DEVICE_ID"                       : ("XCI-USP", "OPSERO"),
        "PF0_Use_Class_Code_Lookup_Assistant" : ("XCI-USP", "OPSERO"),
        "PF0_CLASS_CODE"                      : ("XCI-USP", "LITEPCIE-RP OPSERO PCI-CLASS"),
        "pf0_dev_cap_max_payload"             : ("XCI-USP", "CAPI2"),
        "PF0_INTERRUPT_PIN"                   : ("XCI-USP", "LITEPCIE"),
        "aspm_support"                        : ("XCI-USP", "LITEPCIE"),
        "coreclk_freq"                        : ("XCI-USP", "PG213 OPSERO"),
        "plltype"                             : ("XCI-USP", "OPSERO"),
        "REF_CLK_FREQ"                        : ("XCI-USP", "LITEX-BOARDS"),
        "pcie_blk_locn"                       : ("XCI-USP", "OPSERO XCI-USP"),
        "en_gt_selection"                     : ("XCI-USP", "OPSERO"),
        "select_quad"                         : ("XCI-USP", "OPSERO"),
        "ins_loss_profile"                    : ("XCI-USP", "OPSERO"),
        "pf0_bar0_enabled"                    : ("XCI-USP", "OPSERO"),
        "INS_LOSS_NYQ"                        : ("XCI-USP", "OPSERO"),
        "type1_membase_memlimit_enable"       : ("XCI-USP", "OPSERO"),
        **{f"gen_{s}"                         : ("XCI-USP", "XCI-USP LITEX-BOARDS") for s in GEN_SITES["pcie4_uscale_plus"]},
    },
}

#: Names that the published designs set on an IP that embeds the block's IP but that the block's IP
#: itself does not have at IP_VERSIONS (its complete parameter list): never set.
#: ``type1_membase_memlimit_enable`` is an option of xdma/axi_pcie3 and of pcie4_uscale_plus (XCI-USP),
#: not of pcie3_ultrascale 4.4 (XCI-US); Opsero sets it on xdma only (bd_mb.tcl, bd_zynqmp.tcl).
NOT_ON_BLOCK = {
    "pcie_7x"           : [],
    "pcie3_ultrascale"  : ["type1_membase_memlimit_enable"],
    "pcie4_uscale_plus" : [],
}

def confirmed_name(ip, name):
    """The confirmed spelling of CONFIG ``name`` for ``ip`` (case-insensitive, as Vivado), or None."""
    for n in IP_PARAMS[ip]:
        if n.lower() == name.lower():
            return n
    return None

# Values in the form of the IP's default ----------------------------------------------------------

class SiteValue(str):
    """A site parameter's value (``pcie_blk_locn``: ``X0Y1``) that the build script writes in the
    form of the IP's own default (``literec_site_value``): bare as in the published complete
    parameter lists (XCI-US, XCI-USP), or with the default's prefix should Vivado's default carry one
    (Opsero's ``bd_zynqmp.tcl`` derives the value the same way since its Vivado 2024.1 port)."""
