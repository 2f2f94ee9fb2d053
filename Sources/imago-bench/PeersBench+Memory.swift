import Foundation

/// Peak RSS above the process's baseline while one 256-px thumbnail of formats/TestImageLarge.jpg (5250 × 3450)
/// is loaded, Imago (`--child rss-thumbnail`: the pipeline, target size 256 and the resize processor) against
/// Pillow (draft + thumbnail), each in a fresh process. The cold pipeline's peak RSS is in the pipeline facet.
extension PeersBench {
    static func memory(_ env: PeerEnvironment) throws {
        // TestImageLarge.jpg is progressive 4:4:4: libjpeg(-turbo) keeps every DCT coefficient of a multi-scan
        // file (3 × 657 × 432 blocks × 64 × 2 bytes = 109 MB) whatever the output scale. Its baseline twin
        // (make-gallery.py) shows the cost of the scaled decode itself.
        let files = [
            ("5250×3450 progressive JPEG (TestImageLarge.jpg)", env.corpus + "/formats/TestImageLarge.jpg"),
            ("5250×3450 baseline JPEG (its twin)", env.gallery + "/large-baseline.jpg"),
        ]
        func delta(_ figures: [String: Double]) throws -> [Double] {
            let peak = try figures.figure("peak_rss_kb")
            let baseline = try figures.figure("baseline_rss_kb")
            return [(peak - baseline) / 1024, baseline / 1024]
        }
        for (label, file) in files where FileManager.default.fileExists(atPath: file) {
            let medians = try interleave(
                rounds: 5,
                [
                    { try delta(env.runChild(["rss-thumbnail", file])) },
                    { try delta(env.runPeer(["rss-thumbnail", file])) },
                ])
            record(
                "peers: peak RSS above baseline, \(label) → 256 px", unit: "MB", goal: 40, goalOnImago: true,
                peerName: "Pillow draft+thumbnail, fresh process", imago: medians[0][0], peer: medians[1][0])
            print(
                String(
                    format: "  process baselines before the load: imago %.1f MB, python %.1f MB", medians[0][1],
                    medians[1][1]))
        }
    }
}
