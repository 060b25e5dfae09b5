import Foundation
import Testing

@testable import DiligenceClient

/// Issue 32, item 4: on a 256-colour terminal the heat-map had about two visible shades (levels
/// 1 and 2 both `38;5;65`). Each pair of neighbouring levels, and each level against a light and
/// a dark background, must differ by CIEDE2000 ≥ 10, measured on the xterm palette's own values.
@Suite struct HeatMapColorTests {
    /// The RGB value xterm gives entry `index` (16–255: the 6×6×6 cube, then 24 greys).
    static func xterm(_ index: Int) -> RGB {
        if index >= 232 {
            let v = 8 + 10 * (index - 232)
            return RGB(r: v, g: v, b: v)
        }
        let levels = [0, 95, 135, 175, 215, 255]
        let i = index - 16
        return RGB(r: levels[i / 36], g: levels[i / 6 % 6], b: levels[i % 6])
    }

    /// CIE L*a*b* (D65) of an sRGB colour.
    static func lab(_ c: RGB) -> (l: Double, a: Double, b: Double) {
        func linear(_ v: Int) -> Double {
            let c = Double(v) / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        let (r, g, b) = (linear(c.r), linear(c.g), linear(c.b))
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
        func f(_ t: Double) -> Double { t > 216 / 24389 ? cbrt(t) : (24389 / 27 * t + 16) / 116 }
        return (116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)))
    }

    /// CIEDE2000 (Sharma, Wu and Dalal 2005) between two L*a*b* colours.
    static func deltaE(_ p: (l: Double, a: Double, b: Double), _ q: (l: Double, a: Double, b: Double)) -> Double {
        func rad(_ d: Double) -> Double { d * .pi / 180 }
        let cBar = (hypot(p.a, p.b) + hypot(q.a, q.b)) / 2
        let g = 0.5 * (1 - sqrt(pow(cBar, 7) / (pow(cBar, 7) + pow(25, 7))))
        let (a1, a2) = ((1 + g) * p.a, (1 + g) * q.a)
        let (c1, c2) = (hypot(a1, p.b), hypot(a2, q.b))
        func hue(_ a: Double, _ b: Double) -> Double {
            a == 0 && b == 0 ? 0 : (atan2(b, a) * 180 / .pi + 360).truncatingRemainder(dividingBy: 360)
        }
        let (h1, h2) = (hue(a1, p.b), hue(a2, q.b))
        var dh = c1 * c2 == 0 ? 0 : h2 - h1
        if dh > 180 { dh -= 360 } else if dh < -180 { dh += 360 }
        let dH = 2 * sqrt(c1 * c2) * sin(rad(dh / 2))
        let (lBar, cBarP) = ((p.l + q.l) / 2, (c1 + c2) / 2)
        var hBar = h1 + h2
        if c1 * c2 != 0 { hBar = abs(h1 - h2) <= 180 ? hBar / 2 : (hBar < 360 ? (hBar + 360) / 2 : (hBar - 360) / 2) }
        let t =
            1 - 0.17 * cos(rad(hBar - 30)) + 0.24 * cos(rad(2 * hBar)) + 0.32 * cos(rad(3 * hBar + 6)) - 0.20
            * cos(rad(4 * hBar - 63))
        let dTheta = 30 * exp(-pow((hBar - 275) / 25, 2))
        let rC = 2 * sqrt(pow(cBarP, 7) / (pow(cBarP, 7) + pow(25, 7)))
        let sL = 1 + 0.015 * pow(lBar - 50, 2) / sqrt(20 + pow(lBar - 50, 2))
        let (sC, sH) = (1 + 0.045 * cBarP, 1 + 0.015 * cBarP * t)
        let rT = -sin(rad(2 * dTheta)) * rC
        let (dl, dc, dhs) = ((q.l - p.l) / sL, (c2 - c1) / sC, dH / sH)
        return sqrt(dl * dl + dc * dc + dhs * dhs + rT * dc * dhs)
    }

    static func deltaE(_ a: RGB, _ b: RGB) -> Double { deltaE(lab(a), lab(b)) }

    @Test func theFormulaGivesSharmasReferenceValues() {
        #expect(abs(Self.deltaE((50, 2.6772, -79.7751), (50, 0, -82.7485)) - 2.0425) < 0.0001)
        #expect(abs(Self.deltaE((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387)) - 1.2644) < 0.0001)
        #expect(abs(Self.deltaE((50, 2.5, 0), (73, 25, -18)) - 27.1492) < 0.0001)
    }

    @Test func theFourLevelsDifferVisiblyInEveryTaskColour() throws {
        let scale = HeatScale([4])
        let backgrounds = [("light", RGB(r: 255, g: 255, b: 255)), ("dark", RGB(r: 0, g: 0, b: 0)), ("dark grey", Palette.terminalBase)]
        for color in Palette.tasks.keys.sorted() {
            let shades = try (1...4).map { level in
                let cell = scale.cell(level, color: color, paint: Paint(.palette256))
                let code = try #require(cell.firstRange(of: "38;5;").map { cell[$0.upperBound...].prefix { $0.isNumber } }, "\(cell)")
                return Self.xterm(try #require(Int(code)))
            }
            for level in 1..<4 {
                let distance = Self.deltaE(shades[level - 1], shades[level])
                #expect(distance >= 10, "\(color): levels \(level) and \(level + 1) are \(distance) apart")
            }
            for (name, background) in backgrounds {
                for (level, shade) in zip(1..., shades) {
                    let distance = Self.deltaE(shade, background)
                    #expect(distance >= 10, "\(color): level \(level) is \(distance) from the \(name) background")
                }
            }
        }
    }
}
