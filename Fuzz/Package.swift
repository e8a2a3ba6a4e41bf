// swift-tools-version: 6.1
import PackageDescription

// libFuzzer harnesses for everything TierCache reads from outside (scripts/fuzz builds them with
// -sanitize=fuzzer,address and runs each on its seed corpus in Corpus/<harness>/). Their own
// package, so the root package's graph and builds stay as they are.
let harness: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]
let package = Package(
    name: "TierCacheFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "TierCache", path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .target(name: "FuzzDriver"),
        .executableTarget(
            name: "FuzzFieldParsers",
            dependencies: [
                "FuzzDriver", .product(name: "HTTPCaching", package: "TierCache"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: harness),
        .executableTarget(
            name: "FuzzStoredRecord",
            dependencies: [
                "FuzzDriver", .product(name: "TierCacheLMDB", package: "TierCache"),
                .product(name: "TierCache", package: "TierCache"),
            ],
            swiftSettings: harness),
        .executableTarget(
            name: "FuzzStoredResponse",
            dependencies: [
                "FuzzDriver", .product(name: "HTTPCaching", package: "TierCache"),
                .product(name: "TierCache", package: "TierCache"),
            ],
            swiftSettings: harness),
        .executableTarget(
            name: "FuzzURLCacheRecord",
            dependencies: [
                "FuzzDriver", .product(name: "HTTPCachingFoundation", package: "TierCache"),
                .product(name: "TierCache", package: "TierCache"),
            ],
            swiftSettings: harness),
        .executableTarget(
            name: "FuzzRESP",
            dependencies: [
                "FuzzDriver", .product(name: "TierCacheRedis", package: "TierCache"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: harness),
        .executableTarget(
            name: "FuzzTraceReaders",
            dependencies: ["FuzzDriver", .product(name: "CacheSimulation", package: "TierCache")],
            swiftSettings: harness),
        .executableTarget(
            name: "FuzzProxyRequest",
            dependencies: [
                "FuzzDriver", .product(name: "TierCacheProxy", package: "TierCache"),
                .product(name: "TierCache", package: "TierCache"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: harness),
    ],
    swiftLanguageModes: [.v6]
)
