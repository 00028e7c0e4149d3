// \(m) module
