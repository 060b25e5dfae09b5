// Sparklines: one glyph per value, `▁` for none and `▂▃▅▇` for quarters of the largest.

/// The glyphs of a sparkline, from none to the most.
let sparkGlyphs: [Character] = ["▁", "▂", "▃", "▅", "▇"]

/// One glyph per value, scaled to the largest (HeatScale's levels).
func sparkline(_ values: [Int]) -> String {
    let scale = HeatScale(values)
    return String(values.map { sparkGlyphs[scale.level($0)] })
}
