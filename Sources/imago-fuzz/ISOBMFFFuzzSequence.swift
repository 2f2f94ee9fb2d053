import Foundation

/// The image sequence (`moov`) of an ``ISOBMFFFuzzFile``: tracks decided from fuzz bytes around the same real coded
/// images, so that mutations reach libavif's sample tables and Imago's edit-list reading instead of breaking a box's
/// length first. Every sample of an ordinary track is the whole coded image (a key frame), so an ordinary sequence
/// decodes frame by frame; the other decisions write what real parsers must survive: sample counts a table does
/// not hold (up to 2³²−1 samples of one fixed size in one chunk), chunks and `stsc` runs that disagree, offsets
/// anywhere, time-to-sample entries of any count and delta (0 included), sync-sample lists naming any sample,
/// timescales of 0, edit lists of either version with or without the repeat flag, an alpha track (`auxl`) of the
/// right or another track, and sample entries of the other codec or none.
///
/// A decision of 0 is the ordinary choice: one colour track of `1 +` a few frames.
enum ISOBMFFFuzzSequence {
    typealias Decisions = ISOBMFFFuzzFile.Decisions

    /// Where a chunk is said to start.
    enum Offset {
        /// At the coded image of the track's codec (AV1 or HEVC) in `mdat`.
        case payload(avif: Bool)
        /// Anywhere.
        case absolute(UInt32)
    }

    /// One `trak`, as decided.
    struct Track {
        var id: UInt32
        /// The track this one is the alpha of (`tref/auxl`).
        var auxiliaryFor: UInt32?
        var handler: String
        var headerVersion: UInt8
        var mediaVersion: UInt8
        var width: UInt32
        var height: UInt32
        /// The track header's duration (all ones: unknown).
        var duration: UInt32
        var timescale: UInt32
        /// The sample entry's type, and the configuration box inside it (none sometimes).
        var entryType: String
        var configuration: [UInt8]?
        var isAlpha: Bool
        var chunks: [Offset]
        var wideOffsets: Bool
        var sampleToChunk: [(first: UInt32, perChunk: UInt32, description: UInt32)]
        /// `stsz`: one size for every sample (0: the table), the declared count, and the table.
        var fixedSize: UInt32
        var sampleCount: UInt32
        var sizes: [UInt32]
        var timeToSample: [(count: UInt32, delta: UInt32)]
        var sync: [UInt32]?
        /// `elst`: version, the repeat flag, the declared entry count, the first entry's segment duration.
        var edit: (version: UInt8, repeats: Bool, entries: UInt32, segment: UInt32)?
    }

    /// The tracks the next decisions describe (at least one).
    static func tracks(isAVIF: Bool, from d: inout Decisions) -> [Track] {
        let payloads = ISOBMFFCodedPayloads.shared
        let ownEntry = isAVIF ? "av01" : "hvc1"
        let otherEntry = isAVIF ? "hvc1" : "av01"
        var tracks: [Track] = []
        for index in 0..<(1 + d.below(3)) {
            let id = d.below(8) == 7 ? UInt32(d.below(4)) : UInt32(index + 1)
            // The second and later tracks are the first one's alpha, unless the input says otherwise.
            let auxiliaryFor: UInt32? =
                index == 0 ? (d.below(8) == 7 ? UInt32(d.below(4)) : nil) : (d.below(4) == 3 ? nil : tracks[0].id)
            let isAlpha = auxiliaryFor != nil
            let handlers = ["pict", "auxv", "vide", "soun"]
            let handler = d.below(8) == 7 ? handlers[d.below(handlers.count)] : (isAlpha ? "auxv" : "pict")
            let headerVersion: UInt8 = d.flag() ? 1 : 0
            let mediaVersion: UInt8 = d.flag() ? 1 : 0
            let side = UInt32(ISOBMFFCodedPayloads.side)
            let resized = d.below(4) == 3
            let width = resized ? ISOBMFFFuzzFile.sizes[d.below(ISOBMFFFuzzFile.sizes.count)] : side
            let height = resized ? ISOBMFFFuzzFile.sizes[d.below(ISOBMFFFuzzFile.sizes.count)] : side
            let timescales: [UInt32] = [0, 1, 30, 0xFFFF_FFFF]
            let timescale = d.below(8) == 7 ? timescales[d.below(timescales.count)] : 1000
            let entryRule = d.below(8)
            let entryType =
                entryRule == 7
                ? String(decoding: (0..<4).map { _ in 0x61 + d.byte() % 26 }, as: UTF8.self)
                : entryRule == 6 ? otherEntry : ownEntry
            let codedIsAV1 = entryType == "av01" || (entryType != "hvc1" && isAVIF)
            let configurationRule = d.below(8)
            let configuration: [UInt8]? =
                configurationRule == 7
                ? nil
                : (codedIsAV1 != (configurationRule == 6)) ? payloads.av1Configuration : payloads.hevcConfiguration
            let length = UInt32(codedIsAV1 ? payloads.av1.count : payloads.hevc.count)
            let frames = UInt32(1 + d.below(8))
            let description = d.below(8) == 7 ? UInt32(d.byte()) : 1
            var chunks: [Offset] = Array(repeating: .payload(avif: codedIsAV1), count: Int(frames))
            var sampleToChunk = [(first: UInt32(1), perChunk: UInt32(1), description: description)]
            var fixedSize: UInt32 = 0
            var sampleCount = frames
            var sizes = Array(repeating: length, count: Int(frames))
            switch d.below(8) {
            case 4:  // every sample of one size, given once
                fixedSize = length
                sizes = []
            case 5:  // every sample in one chunk: the second starts past the coded image
                chunks = [.payload(avif: codedIsAV1)]
                sampleToChunk = [(1, frames, description)]
            case 6:  // any count of one fixed size in one chunk: a table that costs nothing to declare
                sampleCount = d.flag() ? d.u32() : UInt32(d.u16())
                chunks = [.payload(avif: codedIsAV1)]
                sampleToChunk = [(1, sampleCount, description)]
                fixedSize = length
                sizes = []
            case 7:  // chunks, runs and sizes that disagree, offsets anywhere
                chunks = (0..<(1 + d.below(4))).map { _ in d.flag() ? .payload(avif: codedIsAV1) : .absolute(d.u32()) }
                sampleToChunk = (0..<d.below(4)).map { _ in
                    (UInt32(d.below(4)), d.flag() ? UInt32(d.byte()) : d.u32(), description)
                }
                sampleCount = d.flag() ? frames : d.u32()
                sizes = (0..<min(Int(frames), Int(sampleCount))).map { _ in d.flag() ? length : d.u32() }
            default: break
            }
            let delta = d.below(4) == 3 ? d.u32() : UInt32(1 + d.below(100)) * 10
            let timeToSample =
                d.below(8) == 7
                ? (0..<d.below(4)).map { _ in (d.flag() ? d.u32() : UInt32(d.byte()), d.flag() ? d.u32() : 0) }
                : [(sampleCount, delta)]
            let syncRule = d.below(4)
            let sync: [UInt32]? =
                syncRule < 2 ? nil : syncRule == 2 ? [1] : (0..<(1 + d.below(4))).map { _ in d.u32() % (frames + 2) }
            let durationRule = d.below(4)
            let duration =
                durationRule == 3
                ? (d.flag() ? 0xFFFF_FFFF : d.u32()) : UInt32(truncatingIfNeeded: UInt64(sampleCount) * UInt64(delta))
            let editRule = d.below(4)
            let edit: (UInt8, Bool, UInt32, UInt32)? =
                editRule == 0
                ? nil
                : (
                    d.flag() ? 1 : 0, d.flag(), editRule == 3 ? UInt32(d.byte()) : 1,
                    editRule == 3 ? d.u32() : max(1, duration / UInt32(1 + d.below(3)))
                )
            tracks.append(
                Track(
                    id: id, auxiliaryFor: auxiliaryFor, handler: handler, headerVersion: headerVersion,
                    mediaVersion: mediaVersion, width: width, height: height, duration: duration,
                    timescale: timescale, entryType: entryType, configuration: configuration, isAlpha: isAlpha,
                    chunks: chunks, wideOffsets: d.below(4) == 3, sampleToChunk: sampleToChunk, fixedSize: fixedSize,
                    sampleCount: sampleCount, sizes: sizes, timeToSample: timeToSample, sync: sync, edit: edit))
        }
        return tracks
    }

    /// The `moov` box of `tracks` whose payloads start at `mdatStart` (none for no tracks). Its length does not
    /// depend on `mdatStart`.
    static func moov(_ tracks: [Track], mdatStart: UInt32, payloads: ISOBMFFCodedPayloads) -> [UInt8] {
        guard let first = tracks.first else { return [] }
        let mvhd = fullBox(
            "mvhd", version: 0, flags: 0,
            be(0) + be(0) + be(first.timescale) + be(first.duration) + be(0x0001_0000) + be(0x0100, size: 2)
                + zeros(10) + matrix + zeros(24) + be(UInt32(tracks.count + 1)))
        return box("moov", mvhd + tracks.flatMap { trak($0, mdatStart: mdatStart, payloads: payloads) })
    }

    private static func trak(_ track: Track, mdatStart: UInt32, payloads: ISOBMFFCodedPayloads) -> [UInt8] {
        let wide = track.headerVersion == 1
        let times = wide ? zeros(16) : zeros(8)
        let duration =
            wide ? be64(UInt64(track.duration == 0xFFFF_FFFF ? .max : UInt64(track.duration))) : be(track.duration)
        let tkhd = fullBox(
            "tkhd", version: track.headerVersion, flags: 3,
            times + be(track.id) + zeros(4) + duration + zeros(8) + zeros(8) + matrix + be(track.width << 16)
                + be(track.height << 16))
        let tref: [UInt8] = track.auxiliaryFor.map { box("tref", box("auxl", be($0))) } ?? []
        let edts: [UInt8] =
            track.edit.map { edit -> [UInt8] in
                let entry =
                    edit.version == 1
                    ? be64(UInt64(edit.segment)) + be64(UInt64(0)) : be(edit.segment) + be(0)
                return box(
                    "edts",
                    fullBox(
                        "elst", version: edit.version, flags: edit.repeats ? 1 : 0,
                        be(edit.entries) + entry + be(0x0001_0000)))
            } ?? []
        let mediaTimes = track.mediaVersion == 1 ? zeros(16) : zeros(8)
        let mediaDuration = track.mediaVersion == 1 ? be64(UInt64(track.duration)) : be(track.duration)
        let mdhd = fullBox(
            "mdhd", version: track.mediaVersion, flags: 0,
            mediaTimes + be(track.timescale) + mediaDuration + be(0x55C4, size: 2) + zeros(2))
        let hdlr = fullBox("hdlr", version: 0, flags: 0, zeros(4) + Array(track.handler.utf8) + zeros(12) + [0])
        let vmhd = fullBox("vmhd", version: 0, flags: 1, zeros(8))
        let dinf = box("dinf", fullBox("dref", version: 0, flags: 0, be(1) + fullBox("url ", version: 0, flags: 1, [])))
        let minf = box("minf", vmhd + dinf + stbl(track, mdatStart: mdatStart, payloads: payloads))
        return box("trak", tkhd + tref + edts + box("mdia", mdhd + hdlr + minf))
    }

    private static func stbl(_ track: Track, mdatStart: UInt32, payloads: ISOBMFFCodedPayloads) -> [UInt8] {
        let alpha =
            track.isAlpha
            ? fullBox("auxi", version: 0, flags: 0, Array("urn:mpeg:mpegB:cicp:systems:auxiliary:alpha".utf8) + [0])
            : []
        let entry = box(
            track.entryType,
            zeros(6) + be(1, size: 2) + zeros(16) + be(UInt32(ISOBMFFCodedPayloads.side), size: 2)
                + be(UInt32(ISOBMFFCodedPayloads.side), size: 2) + be(0x0048_0000) + be(0x0048_0000) + zeros(4)
                + be(1, size: 2) + zeros(32) + be(0x0018, size: 2) + be(0xFFFF, size: 2) + (track.configuration ?? [])
                + alpha)
        let stsd = fullBox("stsd", version: 0, flags: 0, be(1) + entry)
        let stts = fullBox(
            "stts", version: 0, flags: 0,
            be(UInt32(track.timeToSample.count)) + track.timeToSample.flatMap { be($0.count) + be($0.delta) })
        let stss = track.sync.map {
            fullBox("stss", version: 0, flags: 0, be(UInt32($0.count)) + $0.flatMap { be($0) })
        }
        let stsc = fullBox(
            "stsc", version: 0, flags: 0,
            be(UInt32(track.sampleToChunk.count))
                + track.sampleToChunk.flatMap { be($0.first) + be($0.perChunk) + be($0.description) })
        let stsz = fullBox(
            "stsz", version: 0, flags: 0,
            be(track.fixedSize) + be(track.sampleCount) + (track.fixedSize == 0 ? track.sizes.flatMap { be($0) } : []))
        let offsets = track.chunks.map { chunk -> UInt32 in
            switch chunk {
            case .payload(let avif): mdatStart + (avif ? 0 : UInt32(payloads.av1.count))
            case .absolute(let offset): offset
            }
        }
        let stco =
            track.wideOffsets
            ? fullBox("co64", version: 0, flags: 0, be(UInt32(offsets.count)) + offsets.flatMap { be64(UInt64($0)) })
            : fullBox("stco", version: 0, flags: 0, be(UInt32(offsets.count)) + offsets.flatMap { be($0) })
        return box("stbl", stsd + stts + (stss ?? []) + stsc + stsz + stco)
    }

    /// The identity matrix of `mvhd` and `tkhd`.
    private static let matrix: [UInt8] = [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000].flatMap { be($0) }

    private static func be(_ value: UInt32, size: Int = 4) -> [UInt8] { ISOBMFFFuzzFile.bigEndian(value, size: size) }
    private static func be64(_ value: UInt64) -> [UInt8] {
        be(UInt32(value >> 32)) + be(UInt32(truncatingIfNeeded: value))
    }
    private static func zeros(_ count: Int) -> [UInt8] { Array(repeating: 0, count: count) }
    private static func box(_ type: String, _ body: [UInt8]) -> [UInt8] { ISOBMFFFuzzFile.box(type, body) }
    private static func fullBox(_ type: String, version: UInt8, flags: UInt32, _ body: [UInt8]) -> [UInt8] {
        ISOBMFFFuzzFile.fullBox(type, version: version, flags: flags, body)
    }
}
