// Placeholder of the widget host's branch (h-widget-host): the chat page's script is written on h-widget-page, whose file wins on merge.
'use strict';
