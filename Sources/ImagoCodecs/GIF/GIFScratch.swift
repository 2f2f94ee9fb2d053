import Foundation

/// The table one GIF encode reuses from frame to frame, so that an animation of small frames does not allocate and
/// fault in fresh memory for each: the histogram's bin slots (32,768; with alpha, for palette PNGs, 163,840, room
/// for the translucent bins too: 640 KB). Allocated when first asked for (frames of at most 256 colours need
/// none), once per encode, and left zeroed between uses. One encode, one thread. (Keeping it across encodes too was
/// measured and gained nothing above the noise.)
final class GIFScratch {
    /// The number of entries of ``slots``: one a bin key (``GIFMedianCut/keyCount`` with alpha).
    let slotCount: Int
    private var allocatedSlots: UnsafeMutablePointer<Int32>?

    /// A table for opaque colours, or with `withAlpha` translucent ones too.
    init(withAlpha: Bool = false) {
        slotCount = withAlpha ? GIFMedianCut.keyCount : 1 << 15
    }

    /// Per bin key, where the histogram keeps that bin's sums (1 + its number in the order first seen), 0 for a
    /// key without pixels; all 0 between uses. Zeroed by `calloc`, whose large blocks are fresh pages the kernel
    /// zeroes only when touched. The sums themselves are packed in the order first seen, so a thumbnail's few
    /// thousand bins touch few pages: one sum table indexed by key (163,840 × 48 bytes) cost a 192 × 128
    /// thumbnail more in page faults than its whole histogram now takes (BENCHMARKS.md, "The quantizer's
    /// nearest-colour search").
    var slots: UnsafeMutablePointer<Int32> {
        if let allocatedSlots { return allocatedSlots }
        guard let raw = calloc(slotCount, MemoryLayout<Int32>.stride) else {
            fatalError("GIFScratch: cannot allocate \(slotCount * MemoryLayout<Int32>.stride) bytes")
        }
        let slots = raw.bindMemory(to: Int32.self, capacity: slotCount)
        allocatedSlots = slots
        return slots
    }

    deinit {
        free(allocatedSlots)
    }
}
