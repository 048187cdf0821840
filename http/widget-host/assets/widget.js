// Placeholder of the widget host's branch (h-widget-host): the embeddable loader is written on h-widget-page, whose file wins on merge.
'use strict';
