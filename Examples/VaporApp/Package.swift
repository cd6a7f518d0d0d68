// swift-tools-version:6.0
import PackageDescription

// A Vapor 4 app whose routes call an upstream service with Courier, on the app's own event loops. Built and
// exercised by `Scripts/examples.sh`.
let package = Package(
    name: "VaporApp",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Courier", path: "../.."),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
    ],
    targets: [
        .executableTarget(
            name: "VaporApp",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "Vapor", package: "vapor"),
            ]
        )
    ]
)
