extension URLConnectionOperation {
    /// AFNetworking 2's operation states (`AFOperationState`), with its raw values.
    enum State: Int, Sendable {
        case paused = -1
        case ready = 1
        case executing = 2
        case finished = 3

        /// The key-value-observing key that changes when an operation enters or leaves this state.
        var key: String {
            switch self {
            case .paused: "isPaused"
            case .ready: "isReady"
            case .executing: "isExecuting"
            case .finished: "isFinished"
            }
        }

        /// AFNetworking 2's valid transitions: ready → paused or executing (or finished, when cancelled before it
        /// started); executing → paused or finished; paused → ready; nothing after finished.
        func canMove(to next: State, cancelled: Bool) -> Bool {
            switch (self, next) {
            case (.ready, .paused), (.ready, .executing), (.executing, .paused), (.executing, .finished),
                (.paused, .ready):
                true
            case (.ready, .finished):
                cancelled
            default:
                false
            }
        }
    }
}
