import Foundation

/// HTTP dates (RFC 9110 §5.6.7): parsing all three formats a recipient must accept, formatting
/// the preferred one.
///
/// - IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`
/// - RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT` (a two-digit year more than 50 years in the future
///   is read as the most recent past year with those digits)
/// - asctime: `Sun Nov  6 08:49:37 1994`
///
/// Parsing is a hand-written scanner over the bytes: no `DateFormatter`, no locale, no allocation.
///
/// The grammar's day names, month names and `GMT` are case-sensitive, but §5.6.7 encourages
/// recipients to be robust, and browsers and CDNs accept them in any case (`THU`, `AUG`, `gmt`),
/// as this parser does. Everything else is strict, as they are: another zone (`UTC`, `AEST`), a
/// two-digit year in an IMF-fixdate, a missing comma, doubled spaces, dashes in an IMF-fixdate,
/// `.` between the time's parts or a one-digit hour make the date invalid, and an invalid
/// `Expires` means already expired (RFC 9111 §5.3).
public enum HTTPDate {
    /// The date in `text`, or `nil` when it is in none of the three formats or names an
    /// impossible time.
    public static func parse(_ text: String, now: Date = Date()) -> Date? {
        var text = text
        return text.withUTF8 { bytes in
            var low = 0, high = bytes.count
            while low < high, bytes[low] == UInt8(ascii: " ") || bytes[low] == UInt8(ascii: "\t") { low += 1 }
            while high > low, bytes[high - 1] == UInt8(ascii: " ") || bytes[high - 1] == UInt8(ascii: "\t") {
                high -= 1
            }
            var scanner = Scanner(UnsafeBufferPointer(rebasing: bytes[low..<high]))
            if let date = scanner.imfFixdate() { return date }
            scanner.reset()
            if let date = scanner.rfc850(now: now) { return date }
            scanner.reset()
            return scanner.asctime()
        }
    }

    /// `date` as an IMF-fixdate, the format HTTP senders must use.
    public static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let weekday = ((days % 7) + 11) % 7  // 1970-01-01 was a Thursday
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(weekdayNames[weekday]), \(two(day)) \(monthNames[month - 1]) \(year) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay % 3600 / 60)):\(two(secondOfDay % 60)) GMT"
    }

    static let weekdayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func makeDate(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(month, year: year),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)  // 60: leap second
        else { return nil }
        let total = days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
        return Date(timeIntervalSince1970: TimeInterval(total))
    }

    static let longWeekdayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]

    /// Reads a date from bytes in place, allocating nothing.
    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }
        mutating func reset() { index = 0 }

        var atEnd: Bool { index >= bytes.count }

        /// Consumes `text`, letters in any case: day and month names and `GMT` are matched
        /// case-insensitively (see ``HTTPDate``).
        mutating func literal(_ text: String) -> Bool {
            for byte in text.utf8 {
                guard index < bytes.count, ASCIICase.lowercase(bytes[index]) == ASCIICase.lowercase(byte) else {
                    return false
                }
                index += 1
            }
            return true
        }

        /// Consumes one of `names` (in any case), returning its index.
        mutating func oneOf(_ names: [String]) -> Int? {
            for (position, name) in names.enumerated() {
                let start = index
                if literal(name) { return position }
                index = start
            }
            return nil
        }

        /// Exactly `count` digits (or between `count` and `maximum`).
        mutating func digits(_ count: Int, maximum: Int? = nil) -> Int? {
            var value = 0, taken = 0
            while index < bytes.count, taken < (maximum ?? count), bytes[index] >= UInt8(ascii: "0"),
                bytes[index] <= UInt8(ascii: "9")
            {
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                index += 1
                taken += 1
            }
            return taken >= count ? value : nil
        }

        mutating func month() -> Int? {
            oneOf(HTTPDate.monthNames).map { $0 + 1 }
        }

        mutating func time() -> (Int, Int, Int)? {
            guard let hour = digits(2), literal(":"), let minute = digits(2), literal(":"), let second = digits(2)
            else { return nil }
            return (hour, minute, second)
        }

        mutating func weekday(long: Bool) -> Bool {
            oneOf(long ? HTTPDate.longWeekdayNames : HTTPDate.weekdayNames) != nil
        }

        /// `Sun, 06 Nov 1994 08:49:37 GMT`
        mutating func imfFixdate() -> Date? {
            guard weekday(long: false), literal(", "), let day = digits(2), literal(" "), let month = month(),
                literal(" "),
                let year = digits(4), literal(" "), let (h, m, s) = time(), literal(" GMT"), atEnd
            else { return nil }
            return HTTPDate.makeDate(year: year, month: month, day: day, hour: h, minute: m, second: s)
        }

        /// `Sunday, 06-Nov-94 08:49:37 GMT`
        mutating func rfc850(now: Date) -> Date? {
            guard weekday(long: true), literal(", "), let day = digits(2), literal("-"), let month = month(),
                literal("-"),
                let shortYear = digits(2), literal(" "), let (h, m, s) = time(), literal(" GMT"), atEnd
            else { return nil }
            let currentYear = HTTPDate.civil(fromDays: Int(now.timeIntervalSince1970) / 86_400).year
            var year = currentYear - currentYear % 100 + shortYear
            if year > currentYear + 50 { year -= 100 }
            return HTTPDate.makeDate(year: year, month: month, day: day, hour: h, minute: m, second: s)
        }

        /// `Sun Nov  6 08:49:37 1994`
        mutating func asctime() -> Date? {
            guard weekday(long: false), literal(" "), let month = month(), literal(" ") else { return nil }
            _ = literal(" ")  // a one-digit day is padded with a space
            guard let day = digits(1, maximum: 2), literal(" "), let (h, m, s) = time(), literal(" "),
                let year = digits(4), atEnd
            else { return nil }
            return HTTPDate.makeDate(year: year, month: month, day: day, hour: h, minute: m, second: s)
        }
    }
}
