/// Edit distances between widget type names.
public enum EditDistance {
    /// The known type `widgetType` is most likely a typo of, or `nil`: the nearest candidate within `maxDistance`
    /// edits and closer than the shorter name is long.
    ///
    /// `known` maps each known type to how many app versions register it; ties go to the smaller distance, then
    /// more registering versions, then the smaller name, so the answer does not depend on dictionary order.
    public static func likelyTypoOf(_ widgetType: String, among known: [String: Int], maxDistance: Int) -> String? {
        var best: (type: String, distance: Int, registrations: Int)?
        for (candidate, registrations) in known where candidate != widgetType {
            // Lengths alone bound the distance from below; skip the matrix when they already rule a candidate out.
            let lengthGap = abs(candidate.unicodeScalars.count - widgetType.unicodeScalars.count)
            guard lengthGap <= maxDistance else { continue }
            let distance = damerauLevenshtein(widgetType, candidate)
            let shorter = min(candidate.unicodeScalars.count, widgetType.unicodeScalars.count)
            guard distance <= maxDistance, distance < shorter else { continue }
            let better: Bool
            if let best {
                if distance != best.distance {
                    better = distance < best.distance
                } else if registrations != best.registrations {
                    better = registrations > best.registrations
                } else {
                    better = candidate < best.type
                }
            } else {
                better = true
            }
            if better { best = (candidate, distance, registrations) }
        }
        return best?.type
    }

    /// The Damerau–Levenshtein distance between `a` and `b` over Unicode scalars: insertions, deletions,
    /// substitutions and transpositions of adjacent characters each cost one.
    ///
    /// This is the unrestricted distance (a transposed pair may be edited again), computed with Lowrance and
    /// Wagner's algorithm in O(|a|·|b|) time and space; type names are at most 128 characters, so that is small.
    public static func damerauLevenshtein(_ a: String, _ b: String) -> Int {
        let left = Array(a.unicodeScalars)
        let right = Array(b.unicodeScalars)
        if left.isEmpty { return right.count }
        if right.isEmpty { return left.count }
        let infinity = left.count + right.count
        let width = right.count + 2
        // The matrix has an extra leading row and column filled with `infinity`, as in Lowrance–Wagner.
        var matrix = [Int](repeating: 0, count: (left.count + 2) * width)
        matrix[0] = infinity
        for i in 0...left.count {
            matrix[(i + 1) * width] = infinity
            matrix[(i + 1) * width + 1] = i
        }
        for j in 0...right.count {
            matrix[j + 1] = infinity
            matrix[width + j + 1] = j
        }
        var lastRowOf: [Unicode.Scalar: Int] = [:]
        for i in 1...left.count {
            var lastMatchingColumn = 0
            for j in 1...right.count {
                let lastMatchingRow = lastRowOf[right[j - 1]] ?? 0
                let previousMatchingColumn = lastMatchingColumn
                let cost = left[i - 1] == right[j - 1] ? 0 : 1
                if cost == 0 { lastMatchingColumn = j }
                let substitution = matrix[i * width + j] + cost
                let insertion = matrix[(i + 1) * width + j] + 1
                let deletion = matrix[i * width + j + 1] + 1
                let transposition =
                    matrix[lastMatchingRow * width + previousMatchingColumn]
                    + (i - lastMatchingRow - 1) + 1 + (j - previousMatchingColumn - 1)
                matrix[(i + 1) * width + j + 1] = min(substitution, insertion, deletion, transposition)
            }
            lastRowOf[left[i - 1]] = i
        }
        return matrix[(left.count + 1) * width + right.count + 1]
    }
}
