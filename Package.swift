// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Courier",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        // Pixels for ImageDownloader: libpng and libjpeg on Linux (`apt-get install libpng-dev libjpeg62-turbo-dev`),
        // ImageIO on Apple platforms. Separate, so the core library and `courier` build without those headers.
        .library(name: "CourierImageDecoding", targets: ["CourierImageDecoding"]),
        // apple/swift-http-types' HTTPRequest, HTTPResponse and HTTPFields to and from Courier's own types, and
        // sessions called with them. Separate, so the core library gains no dependency.
        .library(name: "CourierHTTPTypes", targets: ["CourierHTTPTypes"]),
        // A ClientTransport for apple/swift-openapi-runtime: clients made by swift-openapi-generator send through a
        // Courier session.
        .library(name: "CourierOpenAPI", targets: ["CourierOpenAPI"]),
        // Stubs, HAR record and replay, and fault injection for testing code that uses Courier, all on the public
        // Transport seam. Separate, so an app ships none of it; the core library gains no dependency.
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
        .executable(name: "courier", targets: ["CourierCommand"]),
    ],
    dependencies: [
        // The "Debug" connection initializers the security policy relies on may change in a minor release.
        .package(url: "https://github.com/swift-server/async-http-client.git", .upToNextMinor(from: "1.37.0")),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // Only for the decompression errors' type, to report them in words; AsyncHTTPClient depends on it anyway.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // Only to place a guard after AsyncHTTPClient's HTTP/2 stream codec (see NIOResponseHeadGuard).
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // Only to tell the no-op tracer from a real one (see NIOTransport); AsyncHTTPClient depends on it anyway.
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.3.0"),
        // The request log line (SessionConfiguration.logger); AsyncHTTPClient depends on it anyway.
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        // `swift package generate-documentation`: builds the DocC catalog; no target depends on it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // Request metrics (SessionConfiguration.metricsFactory); no further dependencies.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        // Only for CourierHTTPTypes and CourierOpenAPI; AsyncHTTPClient depends on it anyway.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // Only for CourierOpenAPI.
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
    ],
    targets: [
        .target(
            name: "Courier",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // libpng and libjpeg behind setjmp/longjmp error handlers, which Swift cannot write (libjpeg's own handler
        // calls exit()). Linux only: Apple platforms decode with ImageIO.
        .target(
            name: "CCourierImageCodecs",
            linkerSettings: [
                .linkedLibrary("png16", .when(platforms: [.linux])), .linkedLibrary("jpeg", .when(platforms: [.linux])),
            ]
        ),
        .target(
            name: "CourierImageDecoding",
            dependencies: ["Courier", .target(name: "CCourierImageCodecs", condition: .when(platforms: [.linux]))],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "CourierHTTPTypes",
            dependencies: ["Courier", .product(name: "HTTPTypes", package: "swift-http-types")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "CourierOpenAPI",
            dependencies: [
                "Courier",
                "CourierHTTPTypes",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "CourierTesting",
            dependencies: ["Courier"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // Makes certificate chains at run time for tests and `courier demo`; not a product.
        .target(
            name: "CourierFixtures",
            dependencies: [
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // The `courier` command line: arguments, request building, output, the demo and its server. A library so
        // the tests can check parsing directly; the executable below is only its entry point.
        .target(
            name: "CourierCLI",
            dependencies: [
                "Courier",
                "CourierFixtures",
                "CourierTesting",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // Not named `courier`: on case-insensitive file systems (macOS) its folder and module would collide with
        // `Courier`'s. The product gives the executable its name.
        .executableTarget(
            name: "CourierCommand",
            dependencies: ["CourierCLI"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // libjpeg's encoder, to make the JPEG files the decoder's tests check pixel by pixel.
        .target(
            name: "CCourierImageTestSupport",
            path: "Tests/CCourierImageTestSupport",
            linkerSettings: [.linkedLibrary("jpeg", .when(platforms: [.linux]))]
        ),
        .testTarget(
            name: "CourierTests",
            dependencies: [
                "Courier",
                "CourierImageDecoding",
                .target(name: "CCourierImageTestSupport", condition: .when(platforms: [.linux])),
                "CourierCLI",
                "CourierFixtures",
                "CourierHTTPTypes",
                "CourierOpenAPI",
                "CourierTesting",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            // The document GeneratedClientTests' client was generated from (once, committed beside it: no build
            // plugin, so no build runs the generator).
            exclude: ["OpenAPI/Generated/openapi.yaml"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
