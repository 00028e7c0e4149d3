import ClientFoundation

/// Token buckets (ClientFoundation's ``TokenBucket``) by key, at most `maxKeys` of them: the least recently used key is
/// forgotten first (it comes back with a full bucket), so memory stays bounded whatever
/// the number of addresses or device ids a flood invents.
struct LRUBuckets: Sendable {
    private struct Node: Sendable {
        var key: String
        var bucket: TokenBucket
        var newer: Int
        var older: Int
    }
    let maxKeys: Int
    private var index: [String: Int] = [:]
    private var nodes: [Node] = []
    /// The most recently used node (-1 when empty).
    private var newest = -1
    /// The least recently used node.
    private var oldest = -1

    init(maxKeys: Int) { self.maxKeys = max(1, maxKeys) }

    var count: Int { index.count }

    /// Takes a token from `key`'s bucket (made with `make` when the key is new) at the clock's
    /// reading `now`: `nil` when granted, else how long until one is there.
    mutating func take(_ key: String, now: Duration, make: () -> TokenBucket) -> Duration? {
        let i: Int
        if let found = index[key] {
            i = found
            unlink(i)
        } else if nodes.count < maxKeys {
            i = nodes.count
            nodes.append(Node(key: key, bucket: make(), newer: -1, older: -1))
            index[key] = i
        } else {
            i = oldest
            unlink(i)
            index[nodes[i].key] = nil
            nodes[i].key = key
            nodes[i].bucket = make()
            index[key] = i
        }
        pushNewest(i)
        return nodes[i].bucket.take(at: now)
    }

    private mutating func unlink(_ i: Int) {
        let (newer, older) = (nodes[i].newer, nodes[i].older)
        if newer >= 0 { nodes[newer].older = older } else { newest = older }
        if older >= 0 { nodes[older].newer = newer } else { oldest = newer }
        nodes[i].newer = -1
        nodes[i].older = -1
    }

    private mutating func pushNewest(_ i: Int) {
        nodes[i].older = newest
        nodes[i].newer = -1
        if newest >= 0 { nodes[newest].newer = i }
        newest = i
        if oldest < 0 { oldest = i }
    }
}
