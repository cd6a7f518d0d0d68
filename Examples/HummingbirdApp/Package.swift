// swift-tools-version:6.0
import PackageDescription

// A Hummingbird 2 app whose routes call an upstream service with Courier, on the app's own event loops. Built and
// exercised by `Scripts/examples.sh`.
let package = Package(
    name: "HummingbirdApp",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Courier", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        // The event loop group the server and Courier share.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "HummingbirdApp",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        )
    ]
)
