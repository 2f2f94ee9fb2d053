import Foundation

/// Several sides measured in one interleaved series: each round runs every side once, in order (A, B, C, A, B,
/// C …), after one warm-up round. Used when one run of a side yields several figures (seconds and peak RSS) or
/// when one slow Imago run is compared against several peers.
///
/// Each side returns its figures for one round; the result holds, per side, the median of each figure.
func interleave(rounds: Int, warmUp: Bool = true, _ sides: [() throws -> [Double]]) throws -> [[Double]] {
    if warmUp { for side in sides { _ = try side() } }
    var samples = [[[Double]]](repeating: [], count: sides.count)
    for _ in 0..<rounds {
        for (i, side) in sides.enumerated() { samples[i].append(try side()) }
    }
    return samples.map { rows in
        guard let width = rows.first?.count else { return [] }
        return (0..<width).map { column in median(rows.map { $0[column] }) }
    }
}

/// Records one comparison of two medians measured elsewhere (see ``interleave(rounds:warmUp:_:)``).
///
/// - Parameter goalOnImago: the goal bounds Imago's figure itself (e.g. peak RSS ≤ 200 MB), not the ratio.
@discardableResult
func record(
    _ name: String, unit: String, goal: Double?, goalOnImago: Bool = false, peerName: String, imago: Double,
    peer: Double, note: String? = nil
) -> Comparison {
    let ratio = imago / peer
    let measured = goalOnImago ? imago : ratio
    let c = Comparison(
        name: name, imago: imago, peer: peer, unit: unit, ratio: ratio, goal: goal, met: goal.map { measured <= $0 },
        peerName: peerName, goalOn: goalOnImago ? "imago" : nil, note: note)
    BenchReport.shared.add(c)
    return c
}
