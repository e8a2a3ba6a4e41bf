/// Decimal numbers written for people and for Swift source alike.
package enum DecimalText {
    /// `thousandths` / 1000 (0...1000) without trailing zeros: "0", "0.05", "0.125", "1".
    package static func thousandths(_ thousandths: Int) -> String {
        guard thousandths > 0 else { return "0" }
        guard thousandths < 1000 else { return "1" }
        var digits = String(thousandths + 1000).dropFirst()  // three digits, leading zeros kept
        while digits.last == "0" { digits = digits.dropLast() }
        return "0." + digits
    }
}
