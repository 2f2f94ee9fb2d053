import ImagoCore

/// Draws pixels as terminal text: each character cell shows two pixels stacked, the upper as the foreground of
/// `▀` and the lower as its background.
struct HalfBlockRenderer {
    /// How colour reaches the terminal.
    enum ColorMode: Sendable, Equatable {
        /// 24-bit colour escapes (`COLORTERM=truecolor`).
        case trueColor
        /// The xterm 256-colour palette (6×6×6 cube and gray ramp).
        case palette256
        /// No escape codes: luminance drawn with ASCII shades (for pipes, `NO_COLOR` and `--no-color`).
        case none
    }

    let mode: ColorMode

    /// The size in cells (columns × rows) that fits `image` into `columns` columns, keeping its aspect ratio
    /// (one row shows two pixel rows; never wider than the image itself).
    static func cellSize(for image: PixelSize, columns: Int) -> (columns: Int, rows: Int) {
        let cols = max(1, min(columns, image.width))
        let pixelRows = max(1, Int((Double(image.height) * Double(cols) / Double(image.width)).rounded()))
        return (cols, (pixelRows + 1) / 2)
    }

    /// The lines of text showing `image` fitted into `columns` columns (each line ends with a colour reset).
    func render(_ image: PixelBuffer, columns: Int) throws -> [String] {
        let cells = Self.cellSize(for: image.size, columns: columns)
        let scaled = try image.convertedToRGBA().resampled(to: PixelSize(width: cells.columns, height: cells.rows * 2))
        var lines: [String] = []
        lines.reserveCapacity(cells.rows)
        for row in 0..<cells.rows {
            var line = ""
            var last: (String, String)? = nil
            for x in 0..<cells.columns {
                let top = scaled[pixel: x, row * 2]
                let bottom = scaled[pixel: x, row * 2 + 1]
                switch mode {
                case .none:
                    line.append(Self.shade(top, bottom))
                case .trueColor, .palette256:
                    let (text, codes) = cell(top, bottom)
                    if last?.0 != codes.0 || last?.1 != codes.1 {
                        line += "\u{1B}[0m" + codes.0 + codes.1
                        last = codes
                    }
                    line += text
                }
            }
            if mode != .none { line += "\u{1B}[0m" }
            lines.append(line)
        }
        return lines
    }

    /// The character and the (foreground, background) escape codes for one cell.
    private func cell(_ top: RGBA, _ bottom: RGBA) -> (String, (String, String)) {
        let topVisible = top.a >= 128
        let bottomVisible = bottom.a >= 128
        switch (topVisible, bottomVisible) {
        case (false, false): return (" ", ("", ""))
        case (true, false): return ("▀", (code(top, background: false), ""))
        case (false, true): return ("▄", (code(bottom, background: false), ""))
        case (true, true): return ("▀", (code(top, background: false), code(bottom, background: true)))
        }
    }

    private func code(_ c: RGBA, background: Bool) -> String {
        // Partial alpha is shown over black, the usual terminal background.
        let a = Int(c.a)
        let r = Int(c.r) * a / 255
        let g = Int(c.g) * a / 255
        let b = Int(c.b) * a / 255
        switch mode {
        case .trueColor: return "\u{1B}[\(background ? 48 : 38);2;\(r);\(g);\(b)m"
        default: return "\u{1B}[\(background ? 48 : 38);5;\(Self.paletteIndex(r: r, g: g, b: b))m"
        }
    }

    /// The nearest xterm-256 colour: the 6×6×6 cube, or the 24-step gray ramp when it is closer.
    static func paletteIndex(r: Int, g: Int, b: Int) -> Int {
        let levels = [0, 95, 135, 175, 215, 255]
        func nearestLevel(_ v: Int) -> Int {
            var best = 0
            for i in 1..<levels.count where abs(levels[i] - v) < abs(levels[best] - v) { best = i }
            return best
        }
        let (ri, gi, bi) = (nearestLevel(r), nearestLevel(g), nearestLevel(b))
        let cubeError = sq(levels[ri] - r) + sq(levels[gi] - g) + sq(levels[bi] - b)
        let gray = (r + g + b) / 3
        let grayIndex = max(0, min(23, (gray - 8 + 5) / 10))
        let grayLevel = 8 + grayIndex * 10
        let grayError = sq(grayLevel - r) + sq(grayLevel - g) + sq(grayLevel - b)
        return grayError < cubeError ? 232 + grayIndex : 16 + 36 * ri + 6 * gi + bi
    }

    private static func sq(_ v: Int) -> Int { v * v }

    private static let shades = Array(" .:-=+*#%@")

    /// An ASCII shade for two stacked pixels (their mean luminance, transparent counting as dark).
    static func shade(_ top: RGBA, _ bottom: RGBA) -> Character {
        let l = (Int(top.luminance) * Int(top.a) + Int(bottom.luminance) * Int(bottom.a)) / (2 * 255)
        return shades[min(shades.count - 1, l * shades.count / 256)]
    }
}
