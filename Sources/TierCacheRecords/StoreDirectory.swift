import Foundation
import TierCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The directory a disk tier keeps its files in.
public enum StoreDirectory {
    /// Creates `directory` (and its parents, owner-only) when absent; throws when the path is a
    /// file, runs through one, or cannot be created, with the code that says what to fix
    /// (`notADirectory`, `permissionDenied`, `diskFull`, else `storageFailure`).
    public static func prepare(_ directory: URL) throws(TierCacheError) {
        let path = directory.path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw TierCacheError(.notADirectory, "\(path) exists and is not a directory")
            }
            return
        }
        // Made a component at a time with mkdir(2), whose errno gives the code: Foundation's
        // error gave none, and every failure was reported as permissionDenied.
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            guard mkdir(prefix, 0o700) != 0 else { continue }
            let failure = errno
            var isDirectory: ObjCBool = false
            if failure == EEXIST, FileManager.default.fileExists(atPath: prefix, isDirectory: &isDirectory),
                isDirectory.boolValue
            {
                continue
            }
            throw TierCacheError(
                TierCacheError.Code(fileSystemErrno: failure), "cannot create directory \(path)",
                underlying: "\(prefix): \(String(cString: strerror(failure)))")
        }
    }
}
