#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""``literec``: get recordings back from LiteRecorder drives on a PC.

Subcommands live in ``literecorder.host.commands``, one module each; a module becomes a
subcommand by defining ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``
(exit status). Nothing else needs to change to add one.

Exit status: 0 success, 1 the data did not verify, 2 bad arguments or unusable drives (missing,
extra, swapped, mixed, corrupt or unknown catalog), 3 I/O error, 4 verify found no error but could
not check all of the recording (its drop log overflowed: where the later data belong in the input
stream is unknown).
"""

import sys
import argparse
import pkgutil
import importlib

EXIT_OK, EXIT_DATA, EXIT_USAGE, EXIT_IO, EXIT_UNCHECKED = 0, 1, 2, 3, 4

def commands():
    """{name: module} of every subcommand module in literecorder.host.commands."""
    from literecorder.host import commands as pkg
    found = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
        if hasattr(mod, "NAME") and hasattr(mod, "run"):
            found[mod.NAME] = mod
    return dict(sorted(found.items()))

def parser():
    p = argparse.ArgumentParser(prog="literec", description=__doc__.split("\n\n")[0].split(": ", 1)[1],
        epilog="Exit status: 0 ok, 1 data errors (verify), 2 unusable drives or arguments, 3 I/O error, "
            "4 no data error but part of the recording could not be checked (verify, drop log overflowed).")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, mod in commands().items():
        sp = sub.add_parser(name, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP))
        mod.add_arguments(sp)
        sp.set_defaults(_run=mod.run)
    return p

def main(argv=None):
    from literecorder.host.drives import SetError
    from literecorder.host.catalog import CatalogError
    args = parser().parse_args(argv)
    try:
        return args._run(args)
    except (SetError, CatalogError) as e:
        print(f"literec {args.command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        print(f"literec {args.command}: I/O error: {e}", file=sys.stderr)
        return EXIT_IO
    except KeyboardInterrupt:
        return 130

if __name__ == "__main__":
    sys.exit(main())
