/// Text from a store (keys, which may hold any character) made safe to print to a terminal:
/// control characters are written as escapes (`\u{1B}`, `\n`), so a key cannot move the cursor,
/// rewrite earlier lines or split a line a script reads, and at most `limit` characters are kept.
func terminalSafe(_ text: String, limit: Int = 100) -> String {
    var result = ""
    for scalar in text.prefix(limit).unicodeScalars {
        if scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format {
            result += scalar.escaped(asASCII: true)
        } else {
            result.unicodeScalars.append(scalar)
        }
    }
    return result
}
