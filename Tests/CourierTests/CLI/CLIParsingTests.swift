import Courier
import Foundation
import Testing

@testable import CourierCLI

/// The command line's parsing and formatting, in process: items, method and URL rules, options, output.
@Suite struct CLIParsingTests {
    @Test(arguments: [
        ("q==a b", RequestItem(name: "q", kind: .query("a b"))),
        ("X-Token:abc", RequestItem(name: "X-Token", kind: .header("abc"))),
        ("X-Time: 12:00", RequestItem(name: "X-Time", kind: .header("12:00"))),
        ("Accept:", RequestItem(name: "Accept", kind: .removeHeader)),
        ("X-Empty;", RequestItem(name: "X-Empty", kind: .emptyHeader)),
        ("name=bang", RequestItem(name: "name", kind: .dataField("bang"))),
        ("url=http://x/?a=b", RequestItem(name: "url", kind: .dataField("http://x/?a=b"))),
        ("n:=1", RequestItem(name: "n", kind: .jsonField("1"))),
        ("note=@/tmp/a.txt", RequestItem(name: "note", kind: .dataFieldFile(path: "/tmp/a.txt"))),
        ("meta:=@m.json", RequestItem(name: "meta", kind: .jsonFieldFile(path: "m.json"))),
        ("photo@a.png", RequestItem(name: "photo", kind: .file(path: "a.png", mimeType: nil))),
        ("photo@a.png;type=image/png", RequestItem(name: "photo", kind: .file(path: "a.png", mimeType: "image/png"))),
        (#"a\=b==c"#, RequestItem(name: "a=b", kind: .query("c"))),
        (#"key=x\=y"#, RequestItem(name: "key", kind: .dataField("x=y"))),
        ("a;b=c", RequestItem(name: "a;b", kind: .dataField("c"))),
    ])
    func items(text: String, expected: RequestItem) {
        #expect(RequestItem.parse(text) == expected)
    }

    @Test func textWithoutASeparatorIsNotAnItem() {
        #expect(RequestItem.parse("plain") == nil)
        #expect(RequestItem.parse(#"a\=b"#) == nil)
    }

    @Test func methodIsGuessedAsHTTPieDoes() throws {
        #expect(try RequestPlan(arguments: ["example.org"], requestedMode: nil).method == "GET")
        #expect(try RequestPlan(arguments: ["example.org", "a==1"], requestedMode: nil).method == "GET")
        #expect(try RequestPlan(arguments: ["example.org", "a=1"], requestedMode: nil).method == "POST")
        #expect(try RequestPlan(arguments: ["put", "example.org", "a=1"], requestedMode: nil).method == "PUT")
        let custom = try RequestPlan(arguments: ["PROPFIND", "example.org/dav"], requestedMode: nil)
        #expect(custom.method == "PROPFIND")
        #expect(custom.url == "http://example.org/dav")
        // `localhost` is letters only, but what follows is an item, so it is the URL.
        let host = try RequestPlan(arguments: ["localhost", "a==1"], requestedMode: nil)
        #expect(host.method == "GET")
        #expect(host.url == "http://localhost")
        #expect(host.items == [RequestItem(name: "a", kind: .query("1"))])
    }

    @Test(arguments: [
        (":8080/x", "http://localhost:8080/x"),
        (":/x", "http://localhost/x"),
        (":", "http://localhost"),
        ("localhost:8080/x", "http://localhost:8080/x"),
        ("example.org", "http://example.org"),
        ("https://example.org/a?b=c", "https://example.org/a?b=c"),
    ])
    func urlShorthands(argument: String, expected: String) throws {
        #expect(try RequestPlan.expandURL(argument) == expected)
    }

    @Test func badURLsAndModesAreRefusedWithTheirCause() throws {
        #expect(throws: CommandFailure.self) { try RequestPlan.expandURL("ftp://example.org") }
        #expect(throws: CommandFailure.self) { try RequestPlan(arguments: [], requestedMode: nil) }
        #expect(throws: CommandFailure.self) {
            try RequestPlan(arguments: ["example.org", "f@a.txt"], requestedMode: .form)
        }
        #expect(try RequestPlan(arguments: ["example.org", "f@a.txt"], requestedMode: nil).bodyMode == .multipart)
    }

    @Test func fieldsNestByKeyPath() throws {
        var tree = FieldTree()
        try tree.insert("bang", at: "user[name]")
        try tree.insert("a", at: "user[tags][]")
        try tree.insert("b", at: "user[tags][]")
        try tree.insert(1, at: "n")
        try tree.insert(2, at: "n")
        try tree.insert("x", at: "odd[")
        #expect(
            tree.parameter
                == ["user": ["name": "bang", "tags": ["a", "b"]], "n": [1, 2], "odd[": "x"])
        #expect(throws: CommandFailure.self) { try tree.insert("c", at: "user[name][deeper]") }
    }

    @Test func jsonValuesBecomeParametersWithIntegersKept() throws {
        let value = Parameter(json: try JSON(data: Data(#"{"a": 1, "b": 1.5, "c": [true, null, "x"]}"#.utf8)))
        #expect(value == ["a": 1, "b": 1.5, "c": [true, .null, "x"]])
    }

    @Test func printOptions() throws {
        let all = try PrintOptions("HBhb")
        #expect(all.requestHead && all.requestBody && all.responseHead && all.responseBody)
        #expect(throws: CommandFailure.self) { try PrintOptions("Hz") }
        let quiet = PrintOptions.defaults(verbose: false, offline: false)
        #expect(quiet.responseBody && !quiet.responseHead && !quiet.requestHead)
        let offline = PrintOptions.defaults(verbose: false, offline: true)
        #expect(offline.requestHead && offline.requestBody && !offline.responseBody)
    }

    @Test func authNeedsAPassword() throws {
        #expect(try AuthOptions("u:p:q", scheme: .basic).credential == Credential(user: "u", password: "p:q"))
        #expect(throws: CommandFailure.self) { try AuthOptions("justuser", scheme: .basic) }
    }

    @Test func jsonIsReindentedKeepingOrderAndNumbers() throws {
        let data = Data(#"{"z":1.0,"a":[1,{"b":null}],"e":{},"s":"x\"y"}"#.utf8)
        let formatted = try #require(JSONFormatter.format(data, reformat: true, style: Style(enabled: false)))
        #expect(
            formatted == """
                {
                    "z": 1.0,
                    "a": [
                        1,
                        {
                            "b": null
                        }
                    ],
                    "e": {},
                    "s": "x\\"y"
                }
                """)
        let coloured = try #require(JSONFormatter.format(data, reformat: false, style: Style(enabled: true)))
        #expect(coloured.hasPrefix("{\u{1B}[34m\"z\"\u{1B}[0m:\u{1B}[36m1.0\u{1B}[0m,"))
        #expect(JSONFormatter.format(Data("not json".utf8), reformat: true, style: Style(enabled: false)) == nil)
    }

    @Test func progressBarRendering() {
        let half = TaskProgress(completed: 2 << 20, total: 4 << 20, throughput: 1_048_576, estimatedTimeRemaining: 2)
        #expect(
            ProgressBar.render(half, label: "f.iso", width: 10)
                == "f.iso  [#####-----]   50%  2.0 MiB / 4.0 MiB  1.0 MiB/s  ETA 0:02")
        let unknown = TaskProgress(completed: 512, total: -1, throughput: 0)
        #expect(ProgressBar.render(unknown, label: "x", width: 10) == "x  512 B  0 B/s")
        #expect(ProgressBar.duration(3725) == "1:02:05")
    }

    @Test func downloadNames() {
        #expect(FileDownload.fileName(fromContentDisposition: #"attachment; filename="report.json""#) == "report.json")
        #expect(
            FileDownload.fileName(fromContentDisposition: "attachment; filename*=UTF-8''na%C3%AFve.txt") == "naïve.txt")
        #expect(FileDownload.fileName(fromContentDisposition: #"attachment; filename="../../etc/passwd""#) == "passwd")
        #expect(FileDownload.fileName(fromContentDisposition: "inline") == nil)
        #expect(FileDownload.fileName(from: URL(string: "http://x/a/b.tar.gz?x=1")!) == "b.tar.gz")
        #expect(FileDownload.fileName(from: URL(string: "http://x/")!) == "index")
    }

    @Test func exitStatusForCheckedResponses() {
        #expect(ExitStatus.checking(statusCode: 200) == .success)
        #expect(ExitStatus.checking(statusCode: 302) == .tooManyRedirects)
        #expect(ExitStatus.checking(statusCode: 404) == .clientError)
        #expect(ExitStatus.checking(statusCode: 502) == .serverError)
    }

    @Test func requestBuilderUsesCourierSerializers() throws {
        let plan = try RequestPlan(
            arguments: ["example.org/p?x=1", "q==a&b", "n:=3", "User-Agent:mine", "Accept-Language:"],
            requestedMode: nil)
        let prepared = try RequestBuilder.build(plan, auth: try AuthOptions("u:p", scheme: .basic), timeout: 5)
        let request = prepared.urlRequest
        #expect(request.url?.absoluteString == "http://example.org/p?x=1&q=a%26b")
        #expect(request.httpMethod == "POST")
        #expect(request.httpBody == Data(#"{"n":3}"#.utf8))
        #expect(request.value(forHTTPHeaderField: "User-Agent") == "mine")
        #expect(request.value(forHTTPHeaderField: "Accept-Language") == nil)
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Basic dTpw")
        #expect(request.timeoutInterval == 5)
        #expect(prepared.body == nil)
    }
}
