// swift-tools-version:6.1
import PackageDescription

// A chat between machines on a LAN, built on LanSession the way an application would be: it depends on the
// package by path and imports the library only.
let package = Package(
    name: "Chat",
    dependencies: [
        .package(name: "LanSession", path: "../.."),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "chat",
            dependencies: [
                .product(name: "LanSession", package: "LanSession"),
                .product(name: "LanSessionDiscovery", package: "LanSession"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Sources/Chat"
        )
    ],
    swiftLanguageModes: [.v6]
)
