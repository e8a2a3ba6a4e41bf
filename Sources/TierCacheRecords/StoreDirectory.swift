import Foundation
import TierCache

/// The directory a disk tier keeps its files in.
public enum StoreDirectory {
    /// Creates `directory` (and its parents, owner-only) when absent; throws when the path is a file
    /// or cannot be created.
    public static func prepare(_ directory: URL) throws(TierCacheError) {
        let path = directory.path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw TierCacheError(.notADirectory, "\(path) exists and is not a directory")
            }
            return
        }
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw TierCacheError(.permissionDenied, "cannot create directory \(path)", underlying: "\(error)")
        }
    }
}
