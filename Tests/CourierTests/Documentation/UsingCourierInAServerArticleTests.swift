import Foundation
import Testing

/// The samples of Sources/Courier/Courier.docc/UsingCourierInAServer.md are excerpts of the example apps under
/// Examples/, which `Scripts/examples.sh` compiles and runs (they need Vapor and Hummingbird, which this package does
/// not depend on): each appears in one of their files, line for line.
struct UsingCourierInAServerArticleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func lines(_ text: String) -> [String] {
        text.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    @Test("Every sample of the article is in an example app, line for line")
    func samplesAreExcerptsOfTheExamples() throws {
        let article = try String(
            contentsOf: Self.root.appendingPathComponent("Sources/Courier/Courier.docc/UsingCourierInAServer.md"),
            encoding: .utf8)
        let samples = article.components(separatedBy: "```swift\n").dropFirst().map {
            Self.lines($0.components(separatedBy: "\n```")[0])
        }
        #expect(samples.count == 5)
        var sources: [String: [String]] = [:]
        for app in ["VaporApp", "HummingbirdApp"] {
            let folder = Self.root.appendingPathComponent("Examples/\(app)/Sources/\(app)")
            for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasSuffix(".swift")
            {
                sources["\(app)/\(file)"] = Self.lines(
                    try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8))
            }
        }
        for sample in samples {
            let found = sources.values.contains { source in
                source.indices.contains { start in
                    start + sample.count <= source.count && Array(source[start..<start + sample.count]) == sample
                }
            }
            #expect(found, "not in Examples/: \(sample.prefix(2).joined(separator: " / "))")
        }
    }
}
