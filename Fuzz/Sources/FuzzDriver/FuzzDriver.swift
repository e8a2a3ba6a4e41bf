import Foundation

/// libFuzzer's entry, for harnesses built as SwiftPM executables: SwiftPM links an executable's
/// `main` as `<Target>_main`, so each harness defines that symbol and hands its test function to
/// `LLVMFuzzerRunDriver` (libFuzzer's documented way in for programs with their own `main`).
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// Runs libFuzzer with `test` as the function under test (which must not throw or trap on any
/// input: a trap is the crash libFuzzer reports).
public func runFuzzer(
    _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32 {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, test)
}

/// The input as an array.
public func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// `--write-seeds DIR` as the first arguments: where a harness whose inputs are binary records
/// writes valid ones for its committed seed corpus (`$bin/<harness> --write-seeds Fuzz/Corpus/<harness>`,
/// with `$bin` the build folder `scripts/fuzz` uses).
public func seedDirectory(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> String? {
    guard argc >= 3, let argv, let flag = argv[1], String(cString: flag) == "--write-seeds", let directory = argv[2]
    else { return nil }
    return String(cString: directory)
}

/// Writes one seed input to `directory/name` for ``seedDirectory(_:_:)``'s corpus. Returns false,
/// having said which file on standard error, if it cannot: a corpus missing a seed would go
/// unnoticed until a fuzzing run covers less than it should.
public func writeSeed(_ input: [UInt8], named name: String, in directory: String) -> Bool {
    let path = "\(directory)/\(name)"
    if FileManager.default.createFile(atPath: path, contents: Data(input)) { return true }
    FileHandle.standardError.write(Data("cannot write the seed input \(path)\n".utf8))
    return false
}
