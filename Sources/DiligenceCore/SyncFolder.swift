/// The sync folder's path as a person gives it (`[sync] directory`, `sync enable DIR`;
/// docs/sync.md): an absolute path or one under the home directory (`~/Sync/diligence`),
/// checked where it enters by this one rule.
public enum SyncFolder {
    /// Longest path accepted (PATH_MAX).
    public static let maxLength = 4096

    /// Why `text` cannot name the sync folder, nil when it can.
    public static func problem(with text: String) -> String? {
        guard text.hasPrefix("/") || text == "~" || text.hasPrefix("~/") else {
            return "the sync folder is an absolute path or ~/…; got \(text.debugDescription)"
        }
        guard text.utf8.count <= maxLength, !text.utf8.contains(0) else {
            return "the sync folder's path has at most \(maxLength) bytes and no NUL"
        }
        return nil
    }

    /// `text` with a leading `~` replaced by `home`, and without a trailing slash.
    public static func expand(_ text: String, home: String) -> String {
        var path = text == "~" || text.hasPrefix("~/") ? home + text.dropFirst() : text
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }
}
