import Synchronization

/// A stored response and the key it is stored under. A class, so the engine passes one
/// reference around a request instead of copying the response's fields.
final class Located: Sendable {
    let response: StoredResponse
    let key: String

    init(response: StoredResponse, key: String) {
        self.response = response
        self.key = key
    }
}

/// A decoded ``StoredEntry``, with responses already located under their key.
enum DecodedEntry: Sendable {
    case response(Located)
    case variants(VariantIndex)
}

/// A decoded entry kept in the tier entry's ``CacheEntry/Memo``: a memory tier hands out copies
/// of the entry it holds, so later hits skip decoding. `key` is the key it was decoded under
/// (the one a revalidation writes back to); a memo found under another key is not used.
final class DecodedForm: Sendable {
    let key: String
    let entry: DecodedEntry

    init(key: String, entry: DecodedEntry) {
        self.key = key
        self.entry = entry
    }
}
