extension NetworkActivityMonitor {
    /// AFNetworkActivityIndicatorManager's state machine: not active → delaying start → active → delaying end → not
    /// active. The delays keep short requests from flashing the indicator and back-to-back ones from flickering it.
    enum Phase: Sendable, Equatable {
        case notActive
        /// Activity began; the indicator shows if it still goes on when the activation delay has passed.
        case delayingStart
        case active
        /// Activity stopped; the indicator hides unless it begins again within the completion delay.
        case delayingEnd

        /// What a timer to start, if any, when the phase is entered.
        enum Timer: Sendable, Equatable {
            case activation
            case completion
        }

        /// The phase after the activity count changed, with `occurring` telling whether anything is in flight now.
        func afterActivityChange(occurring: Bool) -> Phase {
            switch self {
            case .notActive: occurring ? .delayingStart : .notActive
            case .delayingStart: .delayingStart  // the activation timer decides
            case .active: occurring ? .active : .delayingEnd
            case .delayingEnd: occurring ? .active : .delayingEnd
            }
        }

        /// The phase after the activation timer fired.
        func afterActivationDelay(occurring: Bool) -> Phase {
            self == .delayingStart ? (occurring ? .active : .notActive) : self
        }

        /// The phase after the completion timer fired.
        var afterCompletionDelay: Phase { self == .delayingEnd ? .notActive : self }

        /// Whether the indicator shows in this phase.
        var isVisible: Bool { self == .active || self == .delayingEnd }

        /// The timer entering this phase starts.
        var timer: Timer? {
            switch self {
            case .delayingStart: .activation
            case .delayingEnd: .completion
            case .notActive, .active: nil
            }
        }
    }
}
