import Foundation

/// Large test bodies made without a Swift loop per byte.
///
/// Tests run in a debug build on Swift's cooperative pool, which has one thread per core (two here): a
/// `(0..<8_000_000).map { … }` there keeps a thread busy for seconds, and two such tests at once stall every other
/// test's tasks (a cancellation waited ten seconds for a thread). So bodies are made from one period copied by
/// doubling, or from whole 64-bit words of a seeded generator.
enum TestBytes {
    /// `count` bytes where byte `i` is `byte(i)`, for a `byte` that repeats every `period` bytes.
    static func periodic(count: Int, period: Int = 256, _ byte: (Int) -> UInt8) -> Data {
        var data = Data((0..<min(period, count)).map(byte))
        while data.count < count { data.append(data.prefix(count - data.count)) }
        return data
    }

    /// `count` pseudo-random bytes from `seed`, the same on every run.
    static func random(count: Int, seed: UInt64) -> Data {
        var generator = SeededGenerator(seed: seed)
        var data = Data(count: count)
        data.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                var word = generator.next()
                let length = min(8, buffer.count - offset)
                withUnsafeBytes(of: &word) { bytes in
                    buffer.baseAddress?.advanced(by: offset).copyMemory(from: bytes.baseAddress!, byteCount: length)
                }
                offset += length
            }
        }
        return data
    }

    /// `count` pseudo-random ASCII letters and digits from `seed`.
    static func text(count: Int, seed: UInt64) -> Data {
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
        var data = random(count: count, seed: seed)
        data.withUnsafeMutableBytes { buffer in
            for index in buffer.indices { buffer[index] = letters[Int(buffer[index]) % letters.count] }
        }
        return data
    }
}
