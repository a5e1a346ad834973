import type { CorpusGoal } from "./corpus.ts"

/** Bugs in web and mobile clients. */
export const clientBugs: ReadonlyArray<CorpusGoal> = [
  {
    id: "bug-calendar-dst",
    kind: "bug",
    goal: "Fix the booking calendar showing appointments an hour off after the DST change",
    cwd: "/home/dev/clinic/web",
    work: [
      "appointments booked for after march 30 show an hour early in the week view",
      { grep: "toISOString", path: "src/calendar" }, { read: "src/calendar/slots.ts" },
      "we build the slot dates with new Date(y, m, d, h) in the browser tz and then send utc, right?",
      "switch slots.ts to date-fns-tz and zonedTimeToUtc with the clinic's timezone",
      { bash: "npm i date-fns-tz" }, { edit: "src/calendar/slots.ts" },
      "WeekGrid.tsx still uses getHours()",
      { read: "src/calendar/WeekGrid.tsx" }, { edit: "src/calendar/WeekGrid.tsx" },
      "add tests around the europe/berlin spring forward and fall back dates",
      { write: "src/calendar/slots.test.ts" }, { bash: "npx vitest run src/calendar" },
      "2 failing, the 02:30 slot on the spring-forward day doesn't exist, skip it",
      { edit: "src/calendar/slots.ts" }, { bash: "npx vitest run src/calendar" },
      "looks good, commit",
      { bash: "git commit -am 'Build calendar slots in the clinic time zone'" }
    ],
    off: [
      "give me a 20 minute bodyweight workout",
      "what's the capital of australia, I always forget",
      "write unit tests for the invoice pdf generator",
      "explain how kafka consumer groups rebalance",
      "help me reply to my landlord about the broken heater"
    ],
    drift: [
      "ok switching gears, we need apple pay on the checkout page before friday",
      { read: "src/checkout/PaymentForm.tsx" },
      "does stripe's payment request button support apple pay on the web?",
      "add it above the card form",
      { edit: "src/checkout/PaymentForm.tsx" },
      "yes do it",
      "and register the domain verification file in public/.well-known",
      { write: "public/.well-known/apple-developer-merchantid-domain-association" }
    ]
  },
  {
    id: "bug-search-rerender",
    kind: "bug",
    goal: "Fix the infinite re-render on the search results page",
    cwd: "/home/dev/shop-frontend",
    work: [
      "the search page freezes and react devtools shows SearchResults rendering hundreds of times",
      { read: "src/pages/search/SearchResults.tsx" },
      "Warning: Maximum update depth exceeded. This can happen when a component calls setState inside useEffect, but useEffect either doesn't have a dependency array, or one of the dependencies changes on every render.",
      "the filters object is recreated every render and it's in the effect deps",
      "memoize it with useMemo keyed on the query params",
      { edit: "src/pages/search/SearchResults.tsx" },
      "still loops when I change the sort dropdown",
      { read: "src/pages/search/useSearch.ts" },
      "ah, useSearch sets state during render. move it into the effect",
      { edit: "src/pages/search/useSearch.ts" },
      "write a test with testing-library that counts renders",
      { write: "src/pages/search/SearchResults.test.tsx" }, { bash: "npm test -- SearchResults" },
      "run lint too",
      { bash: "npm run lint" },
      "fix the two lint warnings",
      { edit: "src/pages/search/useSearch.ts" },
      "commit"
    ],
    off: [
      "write a limerick about a cat who hates mondays",
      "how do I file a tax extension",
      "set up sentry for the ios app",
      "what's the best way to learn piano as an adult",
      "add a wishlist button to the product card"
    ],
    drift: [
      "let's start on the wishlist now: a heart button on ProductCard that saves to localStorage",
      { read: "src/components/ProductCard.tsx" }, { edit: "src/components/ProductCard.tsx" },
      "make the heart filled when it's saved",
      "and a /wishlist page listing saved products",
      { write: "src/pages/wishlist/WishlistPage.tsx" },
      "add the route"
    ]
  },
  {
    id: "bug-ipad-rotation-crash",
    kind: "bug",
    goal: "Fix the crash when rotating the video player on iPad",
    cwd: "/home/dev/streamr-ios",
    work: [
      "Fatal error: Unexpectedly found nil while implicitly unwrapping an Optional value\nPlayerViewController.swift line 212\n\nhappens when I turn the ipad during playback",
      { read: "Streamr/Player/PlayerViewController.swift" },
      "playerLayer is nil after viewWillTransition because we rebuild the layer in layoutSubviews",
      "don't rebuild it, just update the frame",
      { edit: "Streamr/Player/PlayerViewController.swift" },
      "also the controls overlay constraints conflict in landscape:\nUnable to simultaneously satisfy constraints. <NSLayoutConstraint:0x600003a1 UIView.width == 375>",
      { read: "Streamr/Player/ControlsOverlay.swift" }, { edit: "Streamr/Player/ControlsOverlay.swift" },
      "add a UI test that rotates twice during playback",
      { write: "StreamrUITests/PlayerRotationTests.swift" },
      { bash: "xcodebuild test -scheme Streamr -destination 'platform=iOS Simulator,name=iPad Pro (12.9-inch)'" },
      "build and run the tests on the ipad simulator again",
      { bash: "xcodebuild test -scheme Streamr -destination 'platform=iOS Simulator,name=iPad Pro (12.9-inch)'" },
      "passes. bump the build number and commit",
      { bash: "agvtool next-version -all && git commit -am 'Keep the player layer across rotations'" }
    ],
    off: [
      "suggest a name for our new fantasy football league",
      "how do I set up push notifications with firebase",
      "what's the weather usually like in tokyo in october",
      "write a product description for a handmade leather wallet",
      "add a settings toggle for autoplay"
    ],
    drift: [
      "can you write the app store release notes for 3.2",
      "mention the new offline downloads and the bug fixes",
      "make it friendlier, less corporate",
      "now translate to german and french"
    ]
  }
]
