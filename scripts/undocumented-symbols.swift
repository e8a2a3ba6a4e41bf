// Lists the public symbols declared in this package's Sources/ that have no doc comment, from the
// symbol graphs DocC was built from, prints each module's count, and exits non-zero when there
// are any.
//   swift scripts/undocumented-symbols.swift SYMBOL_GRAPH_DIRECTORY...    (one per module)
//
// DocC's own coverage ("members") also counts members the compiler synthesizes or the standard
// library supplies (`!=`, `hash(into:)`, `init(rawValue:)`, `localizedDescription`): they have no
// source here to document, and DocC shows the standard library's text for them. A symbol with a
// location under Sources/ is one this package declared, and must have a comment.
import Foundation

var declared = 0
var missing: [String] = []
print("module                       public symbols declared in Sources/, with a doc comment")
for directory in CommandLine.arguments.dropFirst() {
    let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    var moduleDeclared = 0
    var moduleMissing = 0
    for file in files.sorted() where file.hasSuffix(".symbols.json") {
        let url = URL(fileURLWithPath: directory).appendingPathComponent(file)
        guard let data = try? Data(contentsOf: url),
              let graph = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let symbols = graph["symbols"] as? [[String: Any]]
        else {
            FileHandle.standardError.write(Data("cannot read \(url.path)\n".utf8))
            exit(2)
        }
        for symbol in symbols {
            guard let access = symbol["accessLevel"] as? String, access == "public" || access == "open",
                  let location = symbol["location"] as? [String: Any], let uri = location["uri"] as? String,
                  let sources = uri.range(of: "/Sources/")
            else { continue }
            moduleDeclared += 1
            if symbol["docComment"] == nil {
                moduleMissing += 1
                let path = (symbol["pathComponents"] as? [String])?.joined(separator: ".") ?? "?"
                let line = ((location["position"] as? [String: Any])?["line"] as? Int).map { $0 + 1 } ?? 0
                missing.append("\(uri[sources.upperBound...]):\(line): \(path)")
            }
        }
    }
    let module = URL(fileURLWithPath: directory).lastPathComponent
    print("\(module.padding(toLength: 28, withPad: " ", startingAt: 0)) \(moduleDeclared), \(moduleDeclared - moduleMissing)")
    declared += moduleDeclared
}
print("all modules: \(declared), with a doc comment: \(declared - missing.count)")
for symbol in missing { print("undocumented: \(symbol)") }
exit(missing.isEmpty && declared > 0 ? 0 : 1)
