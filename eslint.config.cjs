// ESLint's flat config for ptxbench's JavaScript: the scripts the HTML pages inline
// (src/report/assets/). scripts/lint.sh runs it with ESLint from scripts/install_eslint.sh.
const js = require('@eslint/js');

module.exports = [
  js.configs.recommended,
  {
    files: ['src/report/assets/**/*.js'],
    languageOptions: {
      // An inline classic script in a browser page: no modules, no Node.
      ecmaVersion: 2017,
      sourceType: 'script',
      globals: { window: 'readonly', document: 'readonly' },
    },
    rules: {
      'no-implicit-globals': 'error',
    },
  },
];
