/// The statements the tier runs again and again, each prepared once per connection.
enum Query: Int, CaseIterable {
    case lookup
    case usage
    case readState
    case writeState
    case touch
    case delete
    case evictOldest
    case insert
    case beginWriting
    case commit
    case rollback

    var sql: String {
        switch self {
        case .lookup: "SELECT record FROM entries WHERE key = ?1"
        case .usage: "SELECT used, entries FROM state"
        case .readState: "SELECT used, entries, clock FROM state"
        case .writeState: "UPDATE state SET used = ?1, entries = ?2, clock = ?3"
        case .touch: "UPDATE entries SET tick = ?1 WHERE key = ?2"
        case .delete: "DELETE FROM entries WHERE key = ?1 RETURNING cost"
        case .evictOldest:
            "DELETE FROM entries WHERE id = (SELECT id FROM entries ORDER BY tick LIMIT 1) RETURNING cost"
        case .insert: "INSERT INTO entries(key, record, cost, tick) VALUES (?1, ?2, ?3, ?4)"
        case .beginWriting: "BEGIN IMMEDIATE"
        case .commit: "COMMIT"
        case .rollback: "ROLLBACK"
        }
    }
}
