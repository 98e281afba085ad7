#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""LiteDRAM's SDRAM PHY model with a faster bank memory for Verilator.

LiteDRAM's ``BankModel`` writes its bank memory through a byte-granular port: with a 64-bit DDR3
model (512-bit DFI words) Verilator evaluates 64 write lanes per bank and per cycle, which makes
the whole SoC about 1.5x slower. ``MergedWriteBankModel`` has the same interface and the same byte
semantics (DFI write mask honoured byte by byte), but merges the masked bytes with the stored word
(read-merge-write of one 512-bit word) and writes the word through a single port.
"""

from contextlib import contextmanager

from migen import *

import litedram.phy.model as litedram_model
from litedram.phy.model import SDRAMPHYModel

# Bank Model ---------------------------------------------------------------------------------------

class MergedWriteBankModel(litedram_model.BankModel):
    def __init__(self, data_width, nrows, ncols, burst_length, nphases, we_granularity, init):
        self.activate     = Signal()
        self.activate_row = Signal(max=nrows)
        self.precharge    = Signal()

        self.write        = Signal()
        self.write_col    = Signal(max=ncols)
        self.write_data   = Signal(data_width)
        self.write_mask   = Signal(data_width//8)  # DFI semantics: 1 = byte not written.

        self.read         = Signal()
        self.read_col     = Signal(max=ncols)
        self.read_data    = Signal(data_width)

        # # #

        active = Signal()
        row    = Signal(max=nrows)
        self.sync += \
            If(self.precharge,
                active.eq(0),
            ).Elif(self.activate,
                active.eq(1),
                row.eq(self.activate_row)
            )

        shift      = log2_int(burst_length*nphases)
        mem_len    = nrows*ncols//(burst_length*nphases)
        mem        = Memory(data_width, mem_len, init=init)
        write_port = mem.get_port(write_capable=True)
        old_port   = mem.get_port(async_read=True)
        read_port  = mem.get_port(async_read=True)
        self.specials += mem, write_port, old_port, read_port

        wraddr   = Signal(max=mem_len)
        rdaddr   = Signal(max=mem_len)
        keep     = Signal(data_width)  # Bit mask of the stored bits that are kept.
        self.comb += [
            wraddr.eq((row*ncols | self.write_col)[shift:]),
            rdaddr.eq((row*ncols | self.read_col)[shift:]),
            keep.eq(Cat(*[Replicate(self.write_mask[i], 8) for i in range(data_width//8)])),
            old_port.adr.eq(wraddr),
            If(active,
                write_port.adr.eq(wraddr),
                write_port.dat_w.eq((old_port.dat_r & keep) | (self.write_data & ~keep)),
                write_port.we.eq(self.write),
                If(self.read,
                    read_port.adr.eq(rdaddr),
                    self.read_data.eq(read_port.dat_r)
                )
            )
        ]

# PHY Model ----------------------------------------------------------------------------------------

@contextmanager
def _bank_model(cls):
    saved = litedram_model.BankModel
    litedram_model.BankModel = cls
    try:
        yield
    finally:
        litedram_model.BankModel = saved

def FastSDRAMPHYModel(*args, **kwargs):
    """``SDRAMPHYModel`` built with ``MergedWriteBankModel`` banks (same ports, same behaviour)."""
    with _bank_model(MergedWriteBankModel):
        return SDRAMPHYModel(*args, **kwargs)
