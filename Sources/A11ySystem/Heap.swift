// SPDX-License-Identifier: GPL-3.0-or-later
import CMalloc

/// glibc's allocator, set for a daemon that runs for weeks.
///
/// glibc gives each thread that meets contention an arena of its own, keeps it for the process's
/// life, and keeps freed memory in the arena that served it. Under `make soak` a11yd's ten threads
/// held eleven arenas, 12 MB of heap for 2 MB in use (`malloc_stats`), and resident memory crept up
/// in steps as arenas filled with free pages. Two arenas and the free pages given back once
/// speech is idle bound it to what is in use (docs/memory.md, "The heap").
public enum Heap {
    /// At most `count` arenas (glibc's `M_ARENA_MAX`; its default is eight per core); threads
    /// beyond that share them. glibc reads the limit once, when a second arena is first made, so
    /// call it first thing in `main`, before any thread starts.
    public static func limitArenas(to count: Int) {
        _ = mallopt(M_ARENA_MAX, Int32(clamping: max(1, count)))
    }

    /// Gives every arena's free pages back to the system (`malloc_trim(0)`). Cheap for a small
    /// heap, but the pages fault in again when used: call it when idle, not on a hot path.
    public static func returnFreeMemory() {
        _ = malloc_trim(0)
    }
}
