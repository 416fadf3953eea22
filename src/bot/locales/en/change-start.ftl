# Cancelling a start not begun: on_request and at the desk's opening too (src/payments/change-start.ts).
change-refused-started-now = This consultation has already started, so it can no longer be cancelled. For a problem write to /paysupport.
start-refused-refund-in-flight = This order is being cancelled and refunded, so it cannot start.
