import Foundation
import Testing

/// Every code sample in a doc comment of Sources/ is compiled: it appears, verbatim, in DocCommentSamples.swift,
/// which compiles against the public API. A sample added, changed or removed without the same change there fails
/// here.
struct DocCommentSampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The ```swift blocks of the `///` comments of every Swift file under Sources/, by path from the root.
    static func docCommentSamples() throws -> [String: [String]] {
        var samples: [String: [String]] = [:]
        let sources = root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String } ?? []
        for file in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            var block: [String]?
            for line in text.components(separatedBy: "\n") {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                guard trimmed.hasPrefix("///") else {
                    block = nil
                    continue
                }
                var body = trimmed.dropFirst(3)
                if body.hasPrefix(" ") { body = body.dropFirst() }
                if body.hasPrefix("```") {
                    if let lines = block {
                        samples["Sources/" + file, default: []].append(lines.joined(separator: "\n"))
                        block = nil
                    } else {
                        block = []
                    }
                } else {
                    block?.append(String(body))
                }
            }
        }
        return samples
    }

    /// The blocks of DocCommentSamples.swift, by the path each names, with their common indentation removed.
    static func compiledSamples() throws -> [String: [String]] {
        let file = root.appendingPathComponent("Tests/CourierTests/Documentation/DocCommentSamples.swift")
        var samples: [String: [String]] = [:]
        var current: (path: String, lines: [String])?
        for line in try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// sample: ") {
                current = (String(trimmed.dropFirst("// sample: ".count)), [])
            } else if trimmed == "// end sample", let open = current {
                let indent = open.lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
                let code = open.lines.map { $0.isEmpty ? $0 : String($0.dropFirst(indent)) }
                samples[open.path, default: []].append(code.joined(separator: "\n"))
                current = nil
            } else if current != nil {
                current?.lines.append(line)
            }
        }
        return samples
    }

    @Test("Every doc-comment sample is compiled, verbatim")
    func everySampleIsCompiled() throws {
        let documented = try Self.docCommentSamples()
        let compiled = try Self.compiledSamples()
        #expect(documented.values.joined().count >= 20)
        for path in Set(documented.keys).union(compiled.keys).sorted() {
            #expect(
                documented[path] == compiled[path], "\(path): the doc comment's samples and the compiled ones differ")
        }
    }
}
