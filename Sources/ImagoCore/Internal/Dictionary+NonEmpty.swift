extension Dictionary where Key == String, Value == String {
    /// The value for `name` unless it is absent or empty: how an environment variable counts as set (an empty one,
    /// as `FOO=` in a container's settings, is taken as unset, as the AWS, Azure and Google SDKs take it).
    package func nonEmpty(_ name: String) -> String? {
        self[name].flatMap { $0.isEmpty ? nil : $0 }
    }
}
