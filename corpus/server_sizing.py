"""PostgreSQL memory and parallelism sized for the machine it runs on.

PostgreSQL's defaults (shared_buffers 128 MB, maintenance_work_mem 64 MB) are made for any
machine; at a million chunks they make an HNSW build spill to disk (several times slower than
building the graph in memory) and keep the index out of the server's cache. The embedded server
writes these values to `chatpapers.conf` in its data directory before it starts; a server of
one's own (DATABASE_URL) gets the same values from `chatpapers db sizing` to paste into its
postgresql.conf."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import psutil

CONF_NAME = "chatpapers.conf"
_INCLUDE = f"include_if_exists = '{CONF_NAME}'"
_MB = 1024 * 1024


def _mb(value: int) -> str:
    return f"{value // 1024}GB" if value >= 4096 and value % 1024 == 0 else f"{value}MB"


def machine_ram_mb() -> int:
    """This machine's RAM, or the memory limit of the container it runs in when that is lower
    (psutil sees the host's RAM: a server sized from it in a 4 GB container would be killed)."""
    ram = psutil.virtual_memory().total
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            limit = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if limit.isdigit():
            ram = min(ram, int(limit))
    return ram // _MB


def sized_for(
    ram_mb: int | None = None, cores: int | None = None, overrides: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Settings for a server that has `ram_mb` of memory and `cores` CPUs (default: this machine),
    with `overrides` on top (any PostgreSQL setting, by its name)."""
    ram = int(ram_mb if ram_mb is not None else machine_ram_mb())
    cpus = int(cores if cores is not None else (os.cpu_count() or 1))
    quarter = max(128, min(ram // 4, 16 * 1024)) // 128 * 128  # rounded: easier to read in a conf
    values = {
        # A quarter of RAM is the usual share: the rest is the OS page cache, which holds the heap
        # and index pages shared_buffers does not, and room for the app and the local model.
        "shared_buffers": _mb(quarter),
        "effective_cache_size": _mb(max(256, ram * 3 // 4) // 128 * 128),
        # The HNSW graph is built in memory when it fits here: ~1.2 GB per million chunks.
        "maintenance_work_mem": _mb(quarter),
        # Vacuum workers would each take maintenance_work_mem otherwise; they need far less.
        "autovacuum_work_mem": _mb(min(quarter, 1024)),
        "work_mem": _mb(max(4, min(64, ram // 512))),
        "max_parallel_maintenance_workers": str(max(0, min(cpus - 1, 7))),
        "max_parallel_workers_per_gather": str(max(0, min(cpus // 2, 4))),
        # Bulk loads write GBs of WAL: fewer forced checkpoints while loading.
        "max_wal_size": "4GB",
        "random_page_cost": "1.1",  # SSDs: an index page costs about what a sequential one does
    }
    values.update({k: str(v) for k, v in (overrides or {}).items()})
    return values


def conf_text(values: Mapping[str, str]) -> str:
    lines = ["# Written by chatpapers (corpus/server_sizing.py) at every start; edit its settings instead."]
    lines += [f"{name} = '{value}'" for name, value in values.items()]
    return "\n".join(lines) + "\n"


def write_conf(pgdata: Path, values: Mapping[str, str]) -> None:
    """Write `chatpapers.conf` and make postgresql.conf include it (once)."""
    (pgdata / CONF_NAME).write_text(conf_text(values), encoding="utf-8")
    main = pgdata / "postgresql.conf"
    text = main.read_text(encoding="utf-8") if main.exists() else ""
    if _INCLUDE not in text:
        with main.open("a", encoding="utf-8") as f:
            f.write(f"\n# chatpapers: memory and parallelism sized for this machine\n{_INCLUDE}\n")
