// swift-tools-version:6.0
// A separate package so that the root package's `swift build` / `swift test` never build the benchmark.
// Run it with `bash Benchmarks/run.sh` (see README.md).
import PackageDescription

let package = Package(
    name: "CourierBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        // `name:` keeps the product reference below working whatever the checkout's folder is called (a path
        // dependency's identity is its folder name).
        .package(name: "Courier", path: ".."),
        .package(url: "https://github.com/swift-server/async-http-client.git", .upToNextMinor(from: "1.37.0")),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // For the HTTP/2 benchmark's TLS configuration (trusting the run's private CA); Courier already depends on it.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.3.0"),
    ],
    targets: [
        .executableTarget(
            name: "CourierBench",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierImageDecoding", package: "Courier"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
