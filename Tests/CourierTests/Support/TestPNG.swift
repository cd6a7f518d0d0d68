import Foundation

/// A PNG encoder for tests, written from the PNG specification: every colour type and bit depth, optional
/// palette transparency (`tRNS`), and Adam7 interlacing, with the image data in stored (uncompressed) deflate
/// blocks. Sample values are given, so what a decoder must produce is known exactly.
struct TestPNG {
    /// PNG colour types.
    enum ColorType: UInt8, CaseIterable, Sendable {
        case gray = 0
        case rgb = 2
        case palette = 3
        case grayAlpha = 4
        case rgba = 6

        /// Samples per pixel (a palette index is one).
        var channels: Int {
            switch self {
            case .gray, .palette: 1
            case .grayAlpha: 2
            case .rgb: 3
            case .rgba: 4
            }
        }

        /// The bit depths the specification allows.
        var depths: [Int] {
            switch self {
            case .gray: [1, 2, 4, 8, 16]
            case .palette: [1, 2, 4, 8]
            case .rgb, .grayAlpha, .rgba: [8, 16]
            }
        }
    }

    var width: Int
    var height: Int
    var colorType: ColorType
    var depth: Int
    /// `channels` samples per pixel, row by row, each below `2^depth`.
    var samples: [Int]
    /// For `.palette`: RGB entries.
    var palette: [(UInt8, UInt8, UInt8)] = []
    /// For `.palette`: the alpha of the first entries. For `.gray` and `.rgb`: the one transparent colour's samples.
    var transparency: [Int] = []
    var interlaced = false

    /// A deterministic test image: samples spread over the whole range of `depth`, palette and transparency
    /// included where the type has them.
    static func pattern(
        width: Int, height: Int, colorType: ColorType, depth: Int, interlaced: Bool, transparency: Bool = true
    ) -> TestPNG {
        let maximum = (1 << depth) - 1
        var samples: [Int] = []
        let paletteSize = colorType == .palette ? min(1 << depth, 256) : 0
        for y in 0..<height {
            for x in 0..<width {
                for channel in 0..<colorType.channels {
                    let spread = (x * 37 + y * 101 + channel * 59) * 2_654_435_761 % 4_294_967_291
                    samples.append(colorType == .palette ? spread % paletteSize : spread % (maximum + 1))
                }
            }
        }
        var png = TestPNG(
            width: width, height: height, colorType: colorType, depth: depth, samples: samples, interlaced: interlaced)
        if colorType == .palette {
            png.palette = (0..<paletteSize).map { UInt8(($0 * 71) & 255) }.map { ($0, $0 &+ 85, $0 &+ 170) }
            if transparency { png.transparency = (0..<min(paletteSize, 3)).map { [0, 128, 255][$0] } }
        } else if transparency, colorType == .gray || colorType == .rgb {
            png.transparency = Array(samples[0..<colorType.channels])
        }
        return png
    }

    /// The RGBA8 pixels a decoder must produce: low depths scaled up by replication (`v × 255 / (2^d − 1)`),
    /// 16-bit samples rounded to 8 bits (`round(v / 257)`), grey copied to R, G and B, transparency applied.
    var expectedRGBA: [UInt8] {
        let maximum = (1 << depth) - 1
        func to8(_ value: Int) -> UInt8 {
            depth == 16 ? UInt8((Double(value) / 257).rounded()) : UInt8(value * 255 / maximum)
        }
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 4)
        let channels = colorType.channels
        for index in 0..<(width * height) {
            let pixel = Array(samples[index * channels..<(index + 1) * channels])
            switch colorType {
            case .gray:
                let alpha: UInt8 = transparency == pixel ? 0 : 255
                pixels += [to8(pixel[0]), to8(pixel[0]), to8(pixel[0]), alpha]
            case .grayAlpha:
                pixels += [to8(pixel[0]), to8(pixel[0]), to8(pixel[0]), to8(pixel[1])]
            case .rgb:
                let alpha: UInt8 = transparency == pixel ? 0 : 255
                pixels += [to8(pixel[0]), to8(pixel[1]), to8(pixel[2]), alpha]
            case .rgba:
                pixels += pixel.map(to8)
            case .palette:
                let entry = palette[pixel[0]]
                let alpha = pixel[0] < transparency.count ? UInt8(transparency[pixel[0]]) : 255
                pixels += [entry.0, entry.1, entry.2, alpha]
            }
        }
        return pixels
    }

    /// The file.
    var data: Data {
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        file += Self.chunk(
            "IHDR",
            Self.be32(width) + Self.be32(height) + [UInt8(depth), colorType.rawValue, 0, 0, interlaced ? 1 : 0])
        if colorType == .palette {
            file += Self.chunk("PLTE", palette.flatMap { [$0.0, $0.1, $0.2] })
        }
        if !transparency.isEmpty {
            file += Self.chunk(
                "tRNS", colorType == .palette ? transparency.map { UInt8($0) } : transparency.flatMap { Self.be16($0) })
        }
        file += Self.chunk("IDAT", Self.zlibStored(scanlines()))
        file += Self.chunk("IEND", [])
        return Data(file)
    }

    /// The filtered (filter type 0) scanlines: the whole image, or Adam7's seven passes one after another.
    private func scanlines() -> [UInt8] {
        guard interlaced else { return rows(xs: Array(0..<width), ys: Array(0..<height)) }
        let passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
        return passes.flatMap { x0, y0, dx, dy in
            rows(xs: Array(stride(from: x0, to: width, by: dx)), ys: Array(stride(from: y0, to: height, by: dy)))
        }
    }

    /// The rows `ys` restricted to columns `xs`, each with its filter byte; nothing for an empty pass.
    private func rows(xs: [Int], ys: [Int]) -> [UInt8] {
        guard !xs.isEmpty, !ys.isEmpty else { return [] }
        let channels = colorType.channels
        var out: [UInt8] = []
        for y in ys {
            out.append(0)
            var bits = 0
            var accumulator = 0
            for x in xs {
                for channel in 0..<channels {
                    let value = samples[(y * width + x) * channels + channel]
                    if depth == 16 {
                        out += Self.be16(value)
                    } else if depth == 8 {
                        out.append(UInt8(value))
                    } else {
                        accumulator = accumulator << depth | value
                        bits += depth
                        if bits == 8 {
                            out.append(UInt8(accumulator))
                            accumulator = 0
                            bits = 0
                        }
                    }
                }
            }
            if bits > 0 { out.append(UInt8(accumulator << (8 - bits))) }
        }
        return out
    }

    static func be32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
    static func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }

    static func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + body
        return be32(body.count) + typed + be32(Int(crc32(typed)))
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// A zlib stream of stored deflate blocks.
    static func zlibStored(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, bytes.count - offset)
            let last: UInt8 = offset + count == bytes.count ? 1 : 0
            out += [last, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8(~count >> 8 & 0xFF)]
            out += bytes[offset..<offset + count]
            offset += count
        } while offset < bytes.count
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return out + be32(Int(b << 16 | a))
    }
}
