import type { CorpusGoal } from "./corpus.ts"

/**
 * Goals set in English whose work is prompted in another language, as teams do who write goals for
 * a shared board and talk to the coding tool in their own: the work is on-goal in any language.
 * Measured, not tuned on: the detector's words are English, so it cannot judge these prompts
 * (context-6 takes them as follow-ups).
 */
export const otherLanguages: ReadonlyArray<CorpusGoal> = [
  {
    id: "lang-de-login-unicode",
    kind: "bug",
    goal: "Fix the login bug in the auth service",
    cwd: "/home/dev/acme/auth-service",
    work: [
      "warum gibt der Anmelde-Endpunkt einen 500er zurück, wenn das Passwort Umlaute enthält",
      { grep: "normalize", path: "src" }, { read: "src/auth/session.ts" },
      "schau dir src/auth/session.ts an, ich glaube das Hashen passiert vor der Normalisierung",
      { read: "src/auth/hash.ts" }, { edit: "src/auth/hash.ts" },
      "nimm dort NFKC und nicht NFC",
      { bash: "npm test -- src/auth" },
      "lass die Tests nochmal laufen",
      { bash: "npm test -- src/auth" },
      "schreib einen Test mit einem Emoji-Passwort und einem mit kombinierenden Akzenten",
      { edit: "test/auth/hash.test.ts" },
      "hat der Ablauf zum Zurücksetzen des Passworts das gleiche Problem?",
      { read: "src/auth/reset.ts" },
      "ok, dann wende dort die gleiche Korrektur an",
      { edit: "src/auth/reset.ts" },
      "committe das mit einer guten Nachricht"
    ],
    off: [
      "schreib mir einen kurzen Trinkspruch für die Hochzeit meiner Schwester",
      "was ist der Unterschied zwischen einem ETF und einem Fonds",
      "wie setze ich einen Sauerteig an",
      "formuliere eine Nachricht an das Team, dass ich morgen nicht beim Standup bin",
      "welche Serien sind gerade gut"
    ],
    drift: [
      "etwas anderes: der Stripe-Webhook läuft in Produktion in einen Timeout, schau dir src/billing/webhooks.ts an",
      { read: "src/billing/webhooks.ts" },
      "wir verarbeiten das Event synchron, schieb es in die Queue und antworte sofort mit 200",
      "und füge einen Idempotenz-Schlüssel hinzu, Stripe schickt manche Events doppelt"
    ]
  },
  {
    id: "lang-de-dark-mode",
    kind: "feature",
    goal: "Add dark mode to the settings page",
    cwd: "/home/dev/notes-web",
    work: [
      "die Nutzer wollen ein dunkles Design, fang mit der Einstellungsseite an",
      { read: "src/pages/Settings.tsx" }, { grep: "color", path: "src/styles" },
      "die Farben sind überall fest verdrahtet, zieh sie in CSS-Variablen",
      { edit: "src/styles/theme.css" },
      "ein Schalter mit drei Zuständen: hell, dunkel, wie das System",
      { edit: "src/pages/Settings.tsx" },
      "die Wahl soll im localStorage bleiben und beim Laden vor dem ersten Rendern gelten, sonst flackert es",
      { edit: "index.html" },
      "die Diagramme sind im dunklen Modus kaum lesbar, gib ihnen eigene Farben",
      { edit: "src/components/Chart.tsx" },
      "mach Screenshots für beide Varianten",
      { bash: "npx playwright test settings" },
      "passt, committen"
    ],
    off: [
      "wie lange muss ein Ei kochen, damit es wachsweich ist",
      "schreib eine Absage für das Vorstellungsgespräch am Freitag",
      "was bedeutet eigentlich Idempotenz",
      "empfiehl mir ein Buch über Verhandlungsführung",
      "wie ist das Wetter in Lissabon im März"
    ],
    drift: [
      "übrigens, der Export nach PDF bricht bei langen Notizen ab, schau dir das an",
      { read: "src/export/pdf.ts" },
      "die Seitenumbrüche werden nicht berechnet, nutze die Bibliothek dafür",
      "und die Schriftarten müssen eingebettet werden"
    ]
  },
  {
    id: "lang-es-csv-export",
    kind: "bug",
    goal: "Fix the broken accents in the CSV export",
    cwd: "/home/dev/crm",
    work: [
      "los clientes dicen que los nombres con tildes salen rotos en el archivo que descargan",
      { read: "app/exports/customers.py" },
      "¿en qué codificación escribimos el archivo ahora mismo?",
      { grep: "encoding", path: "app/exports" },
      "escríbelo en utf-8 con BOM para que Excel lo abra bien",
      { edit: "app/exports/customers.py" },
      "añade una prueba con un nombre como José Núñez",
      { edit: "tests/test_exports.py" }, { bash: "pytest tests/test_exports.py" },
      "¿las otras descargas tienen el mismo problema?",
      { grep: "csv.writer", path: "app" },
      "aplica lo mismo en las facturas y en los pedidos",
      { edit: "app/exports/invoices.py" }, { edit: "app/exports/orders.py" },
      "vuelve a correr las pruebas",
      { bash: "pytest tests" },
      "haz el commit con un buen mensaje"
    ],
    off: [
      "¿qué le regalo a mi madre por su cumpleaños?",
      "escribe un correo para pedir vacaciones en agosto",
      "¿cómo se hace una buena paella?",
      "recomiéndame una serie de ciencia ficción",
      "¿cuál es la diferencia entre un plan de pensiones y un fondo indexado?"
    ],
    drift: [
      "otra cosa: el panel de ventas tarda diez segundos en cargar, mira app/dashboards/sales.py",
      { read: "app/dashboards/sales.py" },
      "hay una consulta por cada vendedor, júntalas en una sola",
      "y guarda el resultado en caché cinco minutos"
    ]
  }
]
