import Foundation

/// Where ``SVGDecoder`` runs librsvg.
///
/// librsvg 2.54 cannot be interrupted, and an SVG's filters cost what their parameters say: a 600-byte document
/// with a large `feMorphology` radius took 140 s of CPU to draw at 4000 × 4000 (RELIABILITY.md §28). A server that
/// draws SVGs from the internet runs them in a child process it kills after a timeout.
public enum SVGRendering: Sendable, Hashable {
    /// In the decoding thread. The library's default.
    case inProcess
    /// In a child process, `executable ARGUMENTS…`, which must run ``SVGDecoder/runChild()`` (`imago svg-render`
    /// does), killed when it has not answered within `timeout`; the decode then fails with
    /// ``CodecError/renderingTimedOut(format:limit:)``. Each decode starts one child (for `imago`, more CPU than
    /// most drawings: BENCHMARKS.md, "SVG children kept"), through ``ChildProcessDecoder``; to keep children
    /// between drawings, register a ``ChildProcessDecoder`` for `[.svg]` with `idleChildren` instead, as `imago
    /// serve` does.
    case childProcess(executable: URL, arguments: [String], timeout: Duration)
}
