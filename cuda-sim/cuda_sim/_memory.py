"""Device memory of the simulated GPU: the live simulated-CUDA storages, counted as CUDA's caching
allocator counts them (c10/cuda/CUDACachingAllocator.cpp).

Every storage tagged cuda is one allocation of ``round_size(nbytes)`` bytes (multiples of 512,
``kMinBlockSize``; at most 1 MiB comes from the small pool, more from the large pool). A weak
reference on the storage's Python object (which torch keeps alive exactly as long as the storage)
frees it. Storages resized in place (``resize_``) are re-measured whenever the statistics are read.
Reserved memory models the cache: allocated bytes rounded up to 2 MiB segments, kept after frees
until ``empty_cache()``. ``mem_get_info`` answers ``(total - reserved, total)`` as the driver does.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

_MIN_BLOCK = 512  # kMinBlockSize
_SMALL_SIZE = 1 << 20  # kSmallSize: larger requests come from the large pool
_SEGMENT = 2 << 20  # kSmallBuffer / kRoundLarge
_POOLS = ("all", "small_pool", "large_pool")
_METRICS = ("allocation", "segment", "active", "inactive_split", "allocated_bytes", "reserved_bytes",
            "active_bytes", "inactive_split_bytes", "requested_bytes")


def round_size(size: int) -> int:
    """CUDACachingAllocator ``round_size``: zero bytes allocate nothing."""
    if size <= 0:
        return 0
    return max(_MIN_BLOCK, -(-size // _MIN_BLOCK) * _MIN_BLOCK)


def _pool(size: int) -> str:
    return "small_pool" if size <= _SMALL_SIZE else "large_pool"


class _Stat:
    __slots__ = ("allocated", "current", "freed", "peak")

    def __init__(self) -> None:
        self.current = self.peak = self.allocated = self.freed = 0

    def increase(self, amount: int) -> None:
        self.current += amount
        self.allocated += amount
        self.peak = max(self.peak, self.current)

    def decrease(self, amount: int) -> None:
        self.current -= amount
        self.freed += amount

    def as_dict(self) -> dict[str, int]:
        return {"current": self.current, "peak": self.peak, "allocated": self.allocated, "freed": self.freed}


class Allocator:
    """The statistics of the simulated GPU's allocator."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        # id(storage) -> (weak reference, bytes counted, bytes requested)
        self._live: dict[int, tuple[weakref.ref[Any], int, int]] = {}
        self._stats = {metric: {pool: _Stat() for pool in _POOLS} for metric in _METRICS}
        # with no streams to keep a freed block busy, active memory is allocated memory: the same counters
        self._stats["active"] = self._stats["allocation"]
        self._stats["active_bytes"] = self._stats["allocated_bytes"]
        self._device_allocs = self._device_frees = 0
        # per pool, what one allocation from it moves (its own statistics and "all"): (stat, unit) with unit
        # 0 = one allocation, 1 = its rounded bytes, 2 = its requested bytes. Every cuda output allocates, so
        # this is the simulator's hot path: one flat loop instead of a method call per statistic
        self._moves = {pool: tuple((self._stats[metric][name], unit)
                                   for name in ("all", pool)
                                   for metric, unit in (("allocation", 0), ("allocated_bytes", 1),
                                                        ("requested_bytes", 2)))
                       for pool in ("small_pool", "large_pool")}

    def track(self, storage: object) -> None:
        """``storage`` now lives on the simulated GPU (a no-op when it is counted already)."""
        key = id(storage)
        if key in self._live:
            return
        try:
            requested = storage.nbytes()  # type: ignore[attr-defined]
            ref = weakref.ref(storage, self._freed_callback(key))
        except (TypeError, RuntimeError):
            return  # no Python-visible storage to follow
        with self._lock:
            size = round_size(requested)
            self._live[key] = (ref, size, requested)
            self._allocate(size, requested)

    def untrack(self, storage: object) -> None:
        """``storage`` left the simulated GPU (placed back on the CPU)."""
        self._release(id(storage))

    def _freed_callback(self, key: int) -> Any:
        return lambda ref: self._release(key)

    def _release(self, key: int) -> None:
        with self._lock:
            entry = self._live.pop(key, None)
            if entry is not None:
                self._free(entry[1], entry[2])

    def _allocate(self, size: int, requested: int) -> None:
        if size == 0:
            return
        pool = _pool(size)
        amounts = (1, size, requested)
        for stat, unit in self._moves[pool]:
            amount = amounts[unit]
            stat.current += amount
            stat.allocated += amount
            if stat.current > stat.peak:
                stat.peak = stat.current
        self._reserve(pool)

    def _free(self, size: int, requested: int) -> None:
        if size == 0:
            return
        amounts = (1, size, requested)
        for stat, unit in self._moves[_pool(size)]:
            amount = amounts[unit]
            stat.current -= amount
            stat.freed += amount

    def _reserve(self, pool: str) -> None:
        """Grow the pool's segments to hold what is allocated from it (whole 2 MiB segments)."""
        missing = self._segments_needed(pool) - self._stats["reserved_bytes"][pool].current
        if missing > 0:
            self._change_reserved(pool, missing)
            self._device_allocs += missing // _SEGMENT

    def empty_cache(self) -> None:
        """Return the segments no live allocation needs (``torch.cuda.empty_cache``)."""
        with self._lock:
            self._remeasure()
            for pool in ("small_pool", "large_pool"):
                excess = self._stats["reserved_bytes"][pool].current - self._segments_needed(pool)
                if excess > 0:
                    self._change_reserved(pool, -excess)
                    self._device_frees += excess // _SEGMENT

    def _segments_needed(self, pool: str) -> int:
        """Bytes of whole 2 MiB segments that what is allocated from ``pool`` occupies."""
        return -(-self._stats["allocated_bytes"][pool].current // _SEGMENT) * _SEGMENT

    def _change_reserved(self, pool: str, change: int) -> None:
        """Reserved bytes and segment counts of ``pool`` (and of "all") move by ``change`` bytes."""
        for name in ("all", pool):
            for metric, amount in (("reserved_bytes", change), ("segment", change // _SEGMENT)):
                stat = self._stats[metric][name]
                if amount > 0:
                    stat.increase(amount)
                else:
                    stat.decrease(-amount)

    def _remeasure(self) -> None:
        """Storages resized in place since they were counted: a resize frees and allocates."""
        for key, (ref, size, requested) in list(self._live.items()):
            storage = ref()
            if storage is None:
                continue
            now = storage.nbytes()
            if now != requested:
                self._free(size, requested)
                self._live[key] = (ref, round_size(now), now)
                self._allocate(round_size(now), now)

    def stats(self) -> dict[str, Any]:
        """``torch._C._cuda_memoryStats``: the nested statistics ``torch.cuda.memory_stats`` flattens."""
        with self._lock:
            self._remeasure()
            nested: dict[str, Any] = {metric: {pool: stat.as_dict() for pool, stat in pools.items()}
                                      for metric, pools in self._stats.items()}
            nested["oversize_allocations"] = _Stat().as_dict()
            nested["oversize_segments"] = _Stat().as_dict()
            nested.update(num_alloc_retries=0, num_ooms=0, num_sync_all_streams=0,
                          num_device_alloc=self._device_allocs, num_device_free=self._device_frees,
                          max_split_size=-1)
            return nested

    def reset_peak(self) -> None:
        with self._lock:
            self._remeasure()
            for pools in self._stats.values():
                for stat in pools.values():
                    stat.peak = stat.current

    def reset_accumulated(self) -> None:
        with self._lock:
            for pools in self._stats.values():
                for stat in pools.values():
                    stat.allocated = stat.freed = 0
            self._device_allocs = self._device_frees = 0

    def allocated(self) -> int:
        with self._lock:
            self._remeasure()
            return self._stats["allocated_bytes"]["all"].current

    def reserved(self) -> int:
        with self._lock:
            self._remeasure()
            return self._stats["reserved_bytes"]["all"].current


ALLOCATOR = Allocator()
track = ALLOCATOR.track
untrack = ALLOCATOR.untrack
