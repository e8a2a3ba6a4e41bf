// swift-tools-version: 6.1
import PackageDescription

// libFuzzer harnesses for everything TierCache reads from outside (scripts/fuzz builds them with
// -sanitize=fuzzer,address and runs each on its seed corpus in Corpus/<harness>/). Their own
// package, so the root package's graph and builds stay as they are.

/// A harness: an executable on the shared driver, built as a library (its `main` is libFuzzer's).
func harness(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(
        name: name, dependencies: ["FuzzDriver"] + dependencies,
        swiftSettings: [.unsafeFlags(["-parse-as-library"])])
}

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
        harness(
            "FuzzFieldParsers",
            [
                .product(name: "HTTPCaching", package: "TierCache"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]),
        harness(
            "FuzzStoredRecord",
            [
                .product(name: "TierCacheLMDB", package: "TierCache"),
                .product(name: "TierCache", package: "TierCache"),
            ]),
        harness(
            "FuzzStoredResponse",
            [
                .product(name: "HTTPCaching", package: "TierCache"),
                .product(name: "TierCache", package: "TierCache"),
            ]),
        harness(
            "FuzzURLCacheRecord",
            [
                .product(name: "HTTPCachingFoundation", package: "TierCache"),
                .product(name: "TierCache", package: "TierCache"),
            ]),
        harness(
            "FuzzRESP",
            [
                .product(name: "TierCacheRedis", package: "TierCache"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        harness("FuzzTraceReaders", [.product(name: "CacheSimulation", package: "TierCache")]),
        harness(
            "FuzzProxyRequest",
            [
                .product(name: "TierCacheProxy", package: "TierCache"),
                .product(name: "TierCache", package: "TierCache"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
