import ArgumentParser

/// A command that failed at its work, not on its arguments: ArgumentParser prints
/// `Error: <description>` and exits with status 1.
///
/// A `ValidationError` is a usage error: status 64 (`EX_USAGE`) and the command's usage after
/// the message, which tells a user whose store is damaged or whose trace is empty to check their
/// typing. Thrown from `validate()` it is right; from `run()`, for what the input turned out to
/// hold, this is.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
