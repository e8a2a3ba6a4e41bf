/// Names told apart, for reports and results that find a row or a chart line by its name (the
/// simulator's policies, the benchmark runner's subjects and baselines).
package enum DistinctNames {
    /// `name` if it is not taken, else `name (2)`, `name (3)`, ..., the first that is not.
    package static func unused(_ name: String, taken: Set<String>) -> String {
        guard taken.contains(name) else { return name }
        var number = 2
        while taken.contains("\(name) (\(number))") { number += 1 }
        return "\(name) (\(number))"
    }

    /// `names`, each told apart: a name is kept by the first of its holders that `keeping` marks
    /// (a built-in), else by its first holder, and the others are numbered (``unused(_:taken:)``),
    /// skipping numbered names the list already holds.
    package static func apart(_ names: [String], keeping: [Bool]? = nil) -> [String] {
        let preferred = keeping ?? Array(repeating: false, count: names.count)
        var keeper: [String: Int] = [:]
        for (index, name) in names.enumerated() where preferred[index] && keeper[name] == nil { keeper[name] = index }
        for (index, name) in names.enumerated() where keeper[name] == nil { keeper[name] = index }
        var taken = Set(names)
        return names.indices.map { index in
            guard keeper[names[index]] != index else { return names[index] }
            let renamed = unused(names[index], taken: taken)
            taken.insert(renamed)
            return renamed
        }
    }
}
