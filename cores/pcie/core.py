#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""LiteRecorder PCIe root complex: TLP layer + requester + protected completer on a root-port PHY.

::

               +---------------------------- RCRootComplex -----------------------------+
    CPU CSRs --+--> RCRequester --(cfg/mem requests)--+                                 |
    doorbells -+----------------------(posted writes)--+--> RCTLPTX --> phy.sink ------+--> device
               |                                       |                                |
               |   windows <-- RCCompleter <--(MRd/MWr)-+-- RCTLPRX <-- phy.source <----+--- device
               |   (add_window)  --(CplD)---------------+                               |
               +------------------------------------------------------------------------+

The root complex hands out the windows the device may access (``add_window``) and the doorbell
port of the hardware queue engine (``doorbell``); their owners serve them.
"""

from migen import *

from litex.gen import *

from litex.soc.interconnect.csr import *

from literecorder.cores.pcie.common import *
from literecorder.cores.pcie.tlp import RCTLPTX, RCTLPRX
from literecorder.cores.pcie.requester import RCRequester, SHORT_TLP_DWORDS
from literecorder.cores.pcie.completer import RCCompleter
from literecorder.cores.pcie.windows import CompleterWindow

# Root Complex -------------------------------------------------------------------------------------

class RCRootComplex(LiteXModule):
    """PCIe root complex for one root port.

    Parameters
    ----------
    phy : root-port PHY
        ``SimRootPortPHY`` or a Xilinx root-port wrapper (``sink``, ``source``, ``data_width``,
        ``endianness``, ``link_up``, ``link_gen``, ``link_width``, ``ltssm``, ``perst``,
        ``root_mps_cap``).
    """
    def __init__(self, phy, **completer_kwargs):
        dw = phy.data_width
        self.phy = phy

        # # #

        self.tx = tx = RCTLPTX(phy.sink, dw)
        self.rx = rx = RCTLPRX(phy.source, dw, phy.endianness)
        self.requester = RCRequester(
            source     = tx.get_port(dwords=SHORT_TLP_DWORDS),
            cpl        = rx.cpl,
            data_width = dw,
            endianness = phy.endianness)
        self.completer = cpl = RCCompleter(dw, phy.endianness, **completer_kwargs)
        self.comb += [
            rx.req.connect(cpl.req),
            rx.req_status.connect(cpl.req_status),
            rx.req_data.connect(cpl.req_data),
            cpl.source.connect(tx.get_port()),
            rx.mps_log2.eq(cpl.mps_log2),
        ]
        self.doorbell = self.requester.doorbell

    def add_window(self, name, base, size, readable=True, writable=True, on_chip=False):
        """A region of the bus address space the device may access; returns its ``CompleterWindow``
        for its owner to serve (``on_chip``: from a synchronous-read memory port)."""
        return self.completer.add_window(CompleterWindow(name, base, size, self.phy.data_width,
            readable=readable, writable=writable, on_chip=on_chip))

    def add_csr(self):
        phy = self.phy
        req = self.requester
        cpl = self.completer
        self._link = CSRStatus(description="Link status of the root port.", fields=[
            CSRField("up",    size=1, description="Data link layer up (DL_Active)."),
            CSRField("gen",   size=3, description="Trained generation (1-4, 0 when down)."),
            CSRField("width", size=4, description="Trained width in lanes (1, 2, 4, 8; 0 when down)."),
            CSRField("ltssm", size=6, description="LTSSM state (PHY encoding; 0x10 = L0 on UltraScale+ and in simulation)."),
        ])
        self._control = CSRStorage(description="Root port control.", reset=0b01, fields=[
            CSRField("perst", size=1, reset=1, description="PERST# to the device.", values=[
                ("``0b0``", "Released."),
                ("``0b1``", "Asserted (device held in reset)."),
            ]),
            CSRField("dma_enable", size=1, reset=0, description="Serve the device's DMA in the windows (0: every request is refused)."),
            CSRField("mps_log2", size=4, offset=8, reset=MPS_LOG2_RESET, description="log2 of the Max Payload Size programmed in the device (7: 128 B ... 12: 4 KiB): completions are split at this size."),
        ])
        self._root_caps = CSRStatus(32, reset=phy.max_payload_size, description="Max Payload Size programmed in the root port (bytes): the largest TLP it accepts; the SSD's MPS is programmed as min(device, this).")
        self.comb += [
            self._link.fields.up.eq(phy.link_up),
            self._link.fields.gen.eq(phy.link_gen),
            self._link.fields.width.eq(phy.link_width),
            self._link.fields.ltssm.eq(phy.ltssm),
            phy.perst.eq(self._control.fields.perst),
            cpl.enable.eq(self._control.fields.dma_enable),
            cpl.mps_log2.eq(self._control.fields.mps_log2),
        ]

        # Received TLPs the hard block marked discontinue (UltraScale(+): discarded by the PHY; the
        # simulation PHY has no such mark).
        if hasattr(phy, "discontinued"):
            self._discontinued = CSRStatus(32, description="Received TLPs the integrated block marked "
                "``discontinue`` (an uncorrectable error), discarded by the PHY.")
            self.comb += self._discontinued.status.eq(phy.discontinued)

        # Requester.
        self._req_adr_lo = CSRStorage(32, description="Request address [31:0]: memory byte address, or configuration ECAM layout (bus 27:20, device 19:15, function 14:12, register 11:2).")
        self._req_adr_hi = CSRStorage(32, description="Request address [63:32] (memory requests; 4-dword header when non-zero).")
        self._req_wdata_lo = CSRStorage(32, description="Write data, dword 0.")
        self._req_wdata_hi = CSRStorage(32, description="Write data, dword 1.")
        self._req_ctrl = CSRStorage(description="Request; writing it with ``start`` = 1 sends the request.", fields=[
            CSRField("kind", size=2, description="Request type.", values=[
                ("``0b00``", "Memory read."),
                ("``0b01``", "Memory write (posted)."),
                ("``0b10``", "Type-0 configuration read."),
                ("``0b11``", "Type-0 configuration write."),
            ]),
            CSRField("length",   size=2, offset=4, description="Dwords (1 or 2; configuration: 1)."),
            CSRField("first_be", size=4, offset=8, description="First dword byte enables."),
            CSRField("last_be",  size=4, offset=12, description="Last dword byte enables (2-dword requests)."),
            CSRField("start",    size=1, offset=31, pulse=True, description="Send the request."),
        ])
        self._req_timeout = CSRStorage(32, reset=REQ_TIMEOUT_RESET, description="Completion timeout (sys_clk cycles).")
        self._req_status = CSRStatus(description="Request status.", fields=[
            CSRField("busy",   size=1, description="Request in progress."),
            CSRField("status", size=3, offset=4, description="Result of the last request.", values=[
                ("``0``", "Successful completion."),
                ("``1``", "Unsupported Request."),
                ("``2``", "Configuration Request Retry Status (device not ready)."),
                ("``3``", "Completer Abort."),
                ("``4``", "Completion timeout."),
                ("``5``", "Poisoned completion."),
                ("``6``", "Malformed completion."),
            ]),
        ])
        self._req_rdata_lo = CSRStatus(32, description="Read data, dword 0.")
        self._req_rdata_hi = CSRStatus(32, description="Read data, dword 1 (2-dword reads).")
        self.comb += [
            req.adr.eq(Cat(self._req_adr_lo.storage, self._req_adr_hi.storage)),
            req.wdata.eq(Cat(self._req_wdata_lo.storage, self._req_wdata_hi.storage)),
            req.kind.eq(self._req_ctrl.fields.kind),
            req.length.eq(self._req_ctrl.fields.length),
            req.first_be.eq(self._req_ctrl.fields.first_be),
            req.last_be.eq(self._req_ctrl.fields.last_be),
            req.start.eq(self._req_ctrl.fields.start),
            req.timeout.eq(self._req_timeout.storage),
            self._req_status.fields.busy.eq(req.busy),
            self._req_status.fields.status.eq(req.status),
            self._req_rdata_lo.status.eq(req.rdata[:32]),
            self._req_rdata_hi.status.eq(req.rdata[32:]),
        ]

        # Completer and link-layer counters.
        counters = [
            ("rd_refused",     cpl.rd_refused,       "Device reads outside the windows (answered with Unsupported Request)."),
            ("wr_refused",     cpl.wr_refused,       "Device writes outside the windows (dropped)."),
            ("poisoned",       cpl.poisoned,         "Poisoned device writes (dropped)."),
            ("malformed",      cpl.malformed,        "Malformed or oversized device requests (dropped)."),
            ("refused_adr_lo", cpl.refused_adr[:32], "Address [31:0] of the last refused/dropped device request."),
            ("refused_adr_hi", cpl.refused_adr[32:], "Address [63:32] of the last refused/dropped device request."),
            ("rd_served",      cpl.rd_served,        "Completions with data sent to the device."),
            ("unsupported",    self.rx.unsupported,  "Received TLPs of unsupported types (dropped)."),
            ("unexpected",     req.unexpected,       "Completions that matched no request."),
            ("timeouts",       req.timeouts,         "Requests that timed out."),
            ("doorbells",      req.doorbells,        "Doorbell writes sent by the hardware queue engines."),
        ]
        for name, sig, desc in counters:
            csr = CSRStatus(32, name=name, description=desc)
            setattr(self, "_" + name, csr)
            self.comb += csr.status.eq(sig)
        self._wr_bytes = CSRStatus(64, description="Bytes written by the device into the windows.")
        self.comb += self._wr_bytes.status.eq(cpl.wr_bytes)
