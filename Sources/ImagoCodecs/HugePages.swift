#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Asks the kernel to back a large, still untouched pixel buffer with 2 MB pages before a decoder fills it.
///
/// Debian runs transparent huge pages in `madvise` mode, so a fresh buffer of a 12 MP image otherwise takes one
/// page fault per 4 KiB page while libjpeg writes it, and about one per 2 MB page with the hint (the effect on
/// decode time is in BENCHMARKS.md, figures from comments). Only the 2 MB-aligned interior of buffers of 8 MB
/// or more is advised; the hint never changes contents, and failure (THP disabled) is harmless and ignored.
func adviseHugePages(_ buffer: UnsafeMutableRawBufferPointer) {
    let hugePage = 2 << 20
    guard buffer.count >= 4 * hugePage, let base = buffer.baseAddress else { return }
    let start = (Int(bitPattern: base) + hugePage - 1) & ~(hugePage - 1)
    let end = (Int(bitPattern: base) + buffer.count) & ~(hugePage - 1)
    guard end > start, let pointer = UnsafeMutableRawPointer(bitPattern: start) else { return }
    _ = madvise(pointer, end - start, MADV_HUGEPAGE)
}
